/* Linked into every unit test binary (Makefile): CMOCKA_TEST_FILTER=NAME runs
 * only the tests whose name matches NAME (cmocka's pattern: * and ? are
 * wildcards; a plain name is that one test).  cmocka 1.1 has the call but
 * reads no variable for it; tests/mutants/run runs one test by its name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

__attribute__((constructor)) static void filter_from_env(void)
{
	const char *f = getenv("CMOCKA_TEST_FILTER");

	if (f && *f)
		cmocka_set_test_filter(f);
}
