/* The supervisor's side of learning (supervisor/learn.c) against a learner
 * played by the test through wlearn_attach: a learner that answers a call
 * it was not asked about, or sends a malformed frame, or ends, is given up
 * at once, and every call it held is continued (counted unexamined)
 * rather than left waiting (SECURITY.md G221).  The notifications are
 * fake here (no listener: the continue itself fails, harmlessly); the real
 * ones are tests/cli/learn.bats's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "learn.h"
#include "warden/loop.h"
#include "warden/buf.h"
#include "warden/learn.h"
#include "warden/policy.h"

struct fix {
	struct wloop loop;
	struct wlearn L;
	struct wpolicy *pol;
	int learner;   /* the test's end: it plays the learner */
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct werr err = { 0 };
	int sp[2];

	assert_int_equal(policy_load_profile("workspace", &f->pol, &err), 0);
	assert_int_equal(wloop_init(&f->loop, &err), 0);
	assert_int_equal(wlearn_init(&f->L, f->pol, &err), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	assert_int_equal(wlearn_attach(&f->L, &f->loop, sp[0], &err), 0);
	f->learner = sp[1];
	/* two calls forwarded and waiting for their answers */
	f->L.pend = calloc(4, sizeof(*f->L.pend));
	f->L.cap_pend = 4;
	f->L.pend[0].id = 5;
	f->L.pend[1].id = 6;
	f->L.n_pend = 2;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	wlearn_free(&f->L);
	wloop_free(&f->loop);
	close(f->learner);
	policy_free(f->pol);
	free(f);
	return 0;
}

static void say(struct fix *f, uint8_t type, uint64_t id, int with_flag)
{
	struct wbuf b;

	wbuf_init(&b, 64);
	assert_int_equal(wbuf_put_u8(&b, type), 0);
	assert_int_equal(wbuf_put_u64(&b, id), 0);
	if (with_flag)
		assert_int_equal(wbuf_put_u8(&b, 0), 0);
	assert_int_equal(send(f->learner, b.d, b.len, 0), (ssize_t)b.len);
	wbuf_free(&b);
	assert_true(wloop_wait(&f->loop, 1000) >= 1);
}

/* an answer to a pending call: that call is continued, the other waits */
static void test_answer(void **state)
{
	struct fix *f = *state;

	say(f, WLM_DONE, 6, 1);
	assert_int_equal(f->L.n_pend, 1);
	assert_int_equal(f->L.pend[0].id, 5);
	assert_int_equal(f->L.continued, 1);
	assert_true(f->L.sock.fd >= 0);
	assert_string_equal(f->L.why, "");
}

static void given_up(struct fix *f, const char *why)
{
	assert_int_equal(f->L.sock.fd, -1);
	assert_int_equal(f->L.n_pend, 0);
	assert_int_equal(f->L.unexamined, 2);
	assert_non_null(strstr(f->L.why, why));
}

static void test_unasked(void **state)
{
	struct fix *f = *state;

	say(f, WLM_DONE, 7, 1);
	given_up(f, "a call it was not asked about");
}

static void test_malformed(void **state)
{
	struct fix *f = *state;

	say(f, WLM_DONE, 5, 0);   /* no "recorded" byte */
	given_up(f, "malformed");
}

static void test_wrong_type(void **state)
{
	struct fix *f = *state;

	say(f, WLM_CALL, 5, 1);   /* the learner does not send calls */
	given_up(f, "malformed");
}

static void test_ended(void **state)
{
	struct fix *f = *state;

	shutdown(f->learner, SHUT_WR);
	assert_true(wloop_wait(&f->loop, 1000) >= 1);
	given_up(f, "ended");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_answer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unasked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ended, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
