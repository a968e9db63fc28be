/* serve --listen's bearer token (broker/api/listen_auth.c, common/token.c):
 * what a token may be, and which Authorization headers carry it
 * (SECURITY.md G211, G212). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/listen_auth.h"
#include "warden/token.h"

#define TOK "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static int check(const struct lauth *a, const char *hdr)
{
	return lauth_check(a, hdr, strlen(hdr));
}

static void test_token_rule(void **state)
{
	assert_true(wtoken_ok(TOK, strlen(TOK)));
	assert_true(wtoken_ok("abcdefghijklmnopqrstuvwxyz0123456789-._~+/==", 44));
	/* too short, too long */
	assert_false(wtoken_ok(TOK, 31));
	{
		char big[WTOKEN_MAX + 2];
		memset(big, 'a', sizeof(big));
		assert_true(wtoken_ok(big, WTOKEN_MAX));
		assert_false(wtoken_ok(big, WTOKEN_MAX + 1));
	}
	/* what a header could not carry as it is */
	assert_false(wtoken_ok("0123456789abcdef 0123456789abcdef", 33));
	assert_false(wtoken_ok("0123456789abcdef\n0123456789abcdef", 33));
	assert_false(wtoken_ok("0123456789abcdef,0123456789abcdef", 33));
	assert_false(wtoken_ok("================================", 32));
	assert_false(wtoken_ok("0123456789abcdef=0123456789abcdef", 33));
}

static void test_headers(void **state)
{
	struct lauth a;

	assert_int_equal(lauth_init(&a, TOK, strlen(TOK)), 0);
	assert_int_equal(check(&a, "Bearer " TOK), 1);
	assert_int_equal(check(&a, "bearer " TOK), 1);
	assert_int_equal(check(&a, "BEARER\t " TOK "  "), 1);
	assert_int_equal(check(&a, "  Bearer " TOK), 1);
	/* the wrong token, a prefix of it, it with more after it */
	assert_int_equal(check(&a, "Bearer " TOK "0"), 0);
	assert_int_equal(check(&a, "Bearer 0123456789abcdef"), 0);
	assert_int_equal(check(&a, "Bearer 1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"), 0);
	/* another scheme, none, nothing */
	assert_int_equal(check(&a, "Basic " TOK), 0);
	assert_int_equal(check(&a, TOK), 0);
	assert_int_equal(check(&a, "Bearer"), 0);
	assert_int_equal(check(&a, "Bearer "), 0);
	assert_int_equal(check(&a, "Bearer" TOK), 0);
	assert_int_equal(check(&a, ""), 0);
	/* two tokens (a repeated header, joined) */
	assert_int_equal(check(&a, "Bearer " TOK ", Bearer " TOK), 0);
	/* a header of the token's bytes with a NUL in it */
	assert_int_equal(lauth_check(&a, "Bearer " TOK "\0x", strlen("Bearer " TOK) + 2), 0);
	/* bad tokens are refused at the start */
	assert_int_equal(lauth_init(&a, "short", 5), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token_rule),
		cmocka_unit_test(test_headers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
