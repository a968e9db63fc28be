/* The chat's system message tells the model what the jail's network is
 * (issue 10): the mode, and in proxy mode every host it may reach, from
 * the policy the supervisor sent in OPENED (broker/chat/chat_prompt.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "chat/chat_int.h"
#include "chat/chat.h"
#include "warden/policy.h"

/* The system message for a session whose policy is `json` (a policy file's
 * text, shown as policy_to_json shows it, as the supervisor sends it). */
static char *message_for(const char *json)
{
	struct chat c;
	struct wpolicy *p = NULL;
	struct werr err = { 0 };
	char *msg;

	memset(&c, 0, sizeof(c));
	c.max_output = 2000;
	if (policy_load_buffer("test.json", json, strlen(json), &p, &err) < 0)
		fail_msg("%s", err.msg);
	c.sess.policy_json = policy_to_json(p);
	c.sess_open = true;
	msg = chat_system_message(&c);
	free(c.sess.policy_json);
	policy_free(p);
	return msg;
}

static void proxy_lists_every_host(void **state)
{
	char *m = message_for("{\"name\": \"np\", \"network\": {\"mode\": \"proxy\", \"allow\": "
	                      "[\"pypi.org:443\", \"*.example.org\", \"127.0.0.1:8080\"]}}");

	assert_non_null(strstr(m, "- Network: only through warden's proxy"));
	assert_non_null(strstr(m, "pypi.org:443, *.example.org, 127.0.0.1:8080."));
	assert_non_null(strstr(m, "Everything else is refused (HTTP 403)"));
	free(m);
}

static void proxy_with_no_host_says_none(void **state)
{
	char *m = message_for("{\"name\": \"np\", \"network\": {\"mode\": \"proxy\"}}");

	assert_non_null(strstr(m, "to these hosts only (no port: 443 and 80): none."));
	free(m);
}

static void loopback_and_none(void **state)
{
	char *m = message_for("{\"name\": \"lo\", \"network\": {\"mode\": \"loopback\"}}");

	assert_non_null(strstr(m, "- Network: only the jail's own loopback (127.0.0.1)"));
	assert_null(strstr(m, "proxy"));
	free(m);
	m = message_for("{\"name\": \"no\"}");
	assert_non_null(strstr(m, "- Network: none."));
	assert_non_null(strstr(m, "not even 127.0.0.1"));
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(proxy_lists_every_host),
		cmocka_unit_test(proxy_with_no_host_says_none),
		cmocka_unit_test(loopback_and_none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
