/* The learner's pure parts (include/warden/learn.h): the DNS query parser
 * and the address formatter (both read hostile bytes), which proposals
 * are dangerous (learn/danger.c), how proposals settle (inclusion by
 * --include, one entry covering another), and that the rendered policy is
 * one the real parser accepts and that extends the profile as meant. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "warden/learn.h"
#include "warden/policy.h"
#include "warden/util.h"

static int dns(const char *hex_head, const char *qname, char *out)
{
	uint8_t msg[600];
	size_t n = 0, q = strlen(qname);

	for (const char *h = hex_head; h[0] && h[1]; h += 2) {
		unsigned v;
		sscanf(h, "%2x", &v);
		msg[n++] = (uint8_t)v;
	}
	memcpy(msg + n, qname, q + 1);   /* the labels, then the root's 0 */
	n += q + 1;
	msg[n++] = 0;
	msg[n++] = 1;
	msg[n++] = 0;
	msg[n++] = 1;
	return wl_dns_query_name(msg, n, out, 256);
}

#define QUERY "123401000001000000000000"

static void test_dns(void **state)
{
	char name[256];

	assert_int_equal(dns(QUERY, "\3www\7Example\3org", name), 0);
	assert_string_equal(name, "www.example.org");
	assert_int_equal(dns(QUERY, "\5a-b_c\2io", name), 0);
	assert_string_equal(name, "a-b_c.io");
	/* an answer, a second question, no question, the root, a pointer,
	 * a character no host name has, a label running past the end */
	assert_int_equal(dns("123481800001000100000000", "\3www\3org", name), -1);
	assert_int_equal(dns("123401000002000000000000", "\3www\3org", name), -1);
	assert_int_equal(dns("123401000000000000000000", "\3www\3org", name), -1);
	assert_int_equal(dns(QUERY, "", name), -1);
	assert_int_equal(dns(QUERY, "\300\14", name), -1);
	assert_int_equal(dns(QUERY, "\3w w\3org", name), -1);
	assert_int_equal(dns(QUERY, "\3w\033w\3org", name), -1);
	assert_int_equal(wl_dns_query_name((const uint8_t *)"\x12\x34\x01\x00\x00\x01\x00\x00"
	                                   "\x00\x00\x00\x00\x3f" "ab", 16, name, 256), -1);
	assert_int_equal(wl_dns_query_name((const uint8_t *)"", 0, name, 256), -1);
}

/* a name of more than 253 characters is refused, not cut */
static void test_dns_long(void **state)
{
	char q[400] = "", name[256];

	for (int i = 0; i < 5; i++)
		strcat(q, "\077aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	assert_int_equal(dns(QUERY, q, name), -1);
}

static void test_sockaddr(void **state)
{
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(443) };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(80) };
	struct sockaddr_un su = { .sun_family = AF_UNIX, .sun_path = "/run/x.sock" };
	char out[300];
	uint16_t port;

	inet_pton(AF_INET, "93.184.216.34", &s4.sin_addr);
	inet_pton(AF_INET6, "2001:db8::1", &s6.sin6_addr);
	assert_int_equal(wl_sockaddr_str((struct sockaddr *)&s4, sizeof(s4), out, sizeof(out), &port),
	                 AF_INET);
	assert_string_equal(out, "93.184.216.34:443");
	assert_int_equal(port, 443);
	assert_int_equal(wl_sockaddr_str((struct sockaddr *)&s6, sizeof(s6), out, sizeof(out), &port),
	                 AF_INET6);
	assert_string_equal(out, "[2001:db8::1]:80");
	assert_int_equal(wl_sockaddr_str((struct sockaddr *)&su, sizeof(su), out, sizeof(out), &port),
	                 AF_UNIX);
	assert_string_equal(out, "/run/x.sock");
	/* too short for its family; an abstract socket */
	assert_int_equal(wl_sockaddr_str((struct sockaddr *)&s4, 4, out, sizeof(out), &port), -1);
	su.sun_path[0] = '\0';
	assert_int_equal(wl_sockaddr_str((struct sockaddr *)&su, sizeof(su), out, sizeof(out), &port),
	                 -1);
}

#define RO "filesystem.read_only"
#define RW "filesystem.read_write"

static void danger(const char *key, const char *value, const char *want)
{
	char buf[512];
	const char *d = wl_danger(key, value, "/home/ann", buf, sizeof(buf));

	if (!want && d)
		fail_msg("%s += %s: dangerous (%s)", key, value, d);
	if (want && (!d || !strstr(d, want)))
		fail_msg("%s += %s: %s, not \"%s\"", key, value, d ? d : "not dangerous", want);
}

static void test_danger(void **state)
{
	/* homes, and what holds one */
	danger(RO, "/", "whole filesystem");
	danger(RO, "/home", "home directory");
	danger(RO, "/home/ann", "home directory");
	danger(RO, "/home/bob", "home directory");
	danger(RO, "/root", "home directory");
	/* the catalogs, in any home; a directory holding a hidden entry */
	danger(RO, "/home/ann/.ssh/id_rsa", "~/.ssh");
	danger(RO, "/home/bob/.aws/credentials", "~/.aws");
	danger(RO, "/root/.kube", "~/.kube");
	danger(RO, "/home/ann/.config", "holds ~/.config/");
	danger(RW, "/home/ann/.bashrc", "~/.bashrc");
	danger(RO, "/srv/app/.env", ".env");
	danger(RO, "/srv/app/.env.production", ".env.*");
	danger(RW, "/srv/app/.git/hooks", ".git");
	/* the host's state and secrets, writing where it runs code */
	danger(RO, "/proc/1/environ", "/proc");
	danger(RO, "/run/docker.sock", "/run");
	danger(RO, "/etc/shadow", "/etc/shadow");
	danger(RO, "/etc", "/etc/shadow");
	danger(RW, "/usr/local/bin", "/usr");
	danger(RW, "/opt", "/opt");
	danger(RO, "/var/log/warden/audit.jsonl", "warden");
	/* addresses */
	danger("network.allow", "127.0.0.2:8080", "loopback");
	danger("network.allow", "[::1]:80", "loopback");
	danger("network.allow", "10.1.2.3:443", "private");
	danger("network.allow", "169.254.169.254:80", "link-local");
	/* and what is fine */
	danger(RO, "/home/ann/data/sales.csv", NULL);
	danger(RO, "/srv/data", NULL);
	danger(RO, "/usr/share/dict/words", NULL);
	danger(RO, "/srv/app/.git/config", NULL);
	danger(RW, "/srv/out", NULL);
	danger(RW, "/tmp/x/report.txt", NULL);
	danger("network.allow", "pypi.org:443", NULL);
	danger("network.allow", "93.184.216.34:80", NULL);
	danger("syscalls.allow_extra", "sethostname", NULL);
}

static struct wl_base base(void)
{
	static const char *include[] = { "/home/ann/.ssh/id_rsa" };
	struct wl_base b = {
		.profile = "workspace", .name = "learned", .argv0 = "python3",
		.net = WNET_NONE, .profile_net = WNET_NONE, .home = "/home/ann",
		.workspace = "/tmp/ws", .include = include, .n_include = 1,
	};
	return b;
}

static const struct wl_refusal *find(const struct wl_list *l, const char *key, const char *v)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].key && !strcmp(l->v[i].key, key) && !strcmp(l->v[i].value, v))
			return &l->v[i];
	fail_msg("no proposal %s += %s", key, v);
	return NULL;
}

static void test_settle(void **state)
{
	struct wl_base b = base();
	struct wl_list l = { 0 };

	wl_add(&l, WL_READ, "/srv/data/a.csv", "openat", "missing", RO, "/srv/data/a.csv", 1);
	wl_add(&l, WL_PROBE, "/srv/data", "statx", "missing", RO, "/srv/data", 2);
	wl_add(&l, WL_READ, "/srv/out/x", "openat", "missing", RO, "/srv/out/x", 3);
	wl_add(&l, WL_WRITE, "/srv/out/x", "openat", "missing", RW, "/srv/out/x", 4);
	wl_add(&l, WL_READ, "/home/ann/.ssh/id_rsa", "openat", "missing", RO,
	       "/home/ann/.ssh/id_rsa", 5);
	wl_add(&l, WL_READ, "/home/ann/.aws/credentials", "openat", "missing", RO,
	       "/home/ann/.aws/credentials", 6);
	wl_add(&l, WL_READ, "/x", "openat", "missing", RO, "/x", 7);
	wl_add(&l, WL_READ, "/x", "openat", "missing", RO, "/x", 8);   /* counted */
	wl_add(&l, WL_READ, "/y", "openat", "missing", RO, "/y", 9);
	assert_int_equal(l.n, 8);
	/* a call that never ran (WLM_DROP): its count goes, and a refusal
	 * only it showed with it */
	wl_drop(&l, 8);
	assert_int_equal(find(&l, RO, "/x")->count, 1);
	wl_drop(&l, 9);
	assert_int_equal(l.n, 7);
	wl_settle(&l, &b);
	/* below a proposed directory, and read where it is written: covered */
	assert_true(find(&l, RO, "/srv/data")->included);
	assert_false(find(&l, RO, "/srv/data/a.csv")->included);
	assert_true(find(&l, RO, "/srv/data/a.csv")->covered);
	assert_true(find(&l, RW, "/srv/out/x")->included);
	assert_true(find(&l, RO, "/srv/out/x")->covered);
	/* dangerous: in only when --include names it, and still called so */
	assert_true(find(&l, RO, "/home/ann/.ssh/id_rsa")->included);
	assert_non_null(find(&l, RO, "/home/ann/.ssh/id_rsa")->danger);
	assert_false(find(&l, RO, "/home/ann/.aws/credentials")->included);
	assert_non_null(find(&l, RO, "/home/ann/.aws/credentials")->danger);
	wl_free(&l);
}

/* The policy: valid for the real parser, extending the profile with each
 * included entry and nothing else; mode proxy when allow entries come
 * from a profile of mode none. */
static void test_policy_valid(void **state)
{
	struct wl_base b = base();
	struct wl_list l = { 0 };
	struct wpolicy *p = NULL, *w = NULL;
	struct werr err = { 0 };
	char *text;
	bool ro = false, aws = false, ssh = false, sys = false, inws = false;

	wl_add(&l, WL_READ, "/srv/data/a.csv", "openat", "missing", RO, "/srv/data/a.csv", 1);
	wl_add(&l, WL_CREATE, "/srv/out/n", "openat", "ro", RW, "/srv/out", 2);
	wl_add(&l, WL_WRITE, "/tmp/ws/report.txt", "openat", "ro", RW, "/tmp/ws/report.txt", 2);
	wl_add(&l, WL_READ, "/home/ann/.aws/credentials", "openat", "m", RO,
	       "/home/ann/.aws/credentials", 3);
	wl_add(&l, WL_DNS, "pypi.org", "sendto", "none", "network.allow", "pypi.org", 4);
	wl_add(&l, WL_SYSCALL, "sethostname", "sethostname", "denied", "syscalls.allow_extra",
	       "sethostname", 0);
	wl_add(&l, WL_SYSCALL, "ptrace", "ptrace", "denied", NULL, NULL, 0);
	wl_settle(&l, &b);
	text = wl_policy(&l, &b);
	if (policy_load_buffer("learned.json", text, strlen(text), &p, &err) < 0)
		fail_msg("the learned policy is refused: %s\n%s", err.msg, text);
	assert_int_equal(policy_load_profile("workspace", &w, &err), 0);
	assert_string_equal(p->name, "learned");
	assert_int_equal(p->net, WNET_PROXY);
	assert_int_equal(p->net_allow.n, 1);
	assert_string_equal(p->net_allow.v[0], "pypi.org");
	assert_int_equal(p->read_only.n, w->read_only.n + 1);
	for (size_t i = 0; i < p->read_only.n; i++) {
		ro |= !strcmp(p->read_only.v[i], "/srv/data/a.csv");
		aws |= strstr(p->read_only.v[i], ".aws") != NULL;
	}
	for (size_t i = 0; i < p->read_write.n; i++) {
		ssh |= !strcmp(p->read_write.v[i], "/srv/out");
		/* in the workspace: written so that it stays the workspace's */
		inws |= !strcmp(p->read_write.v[i], "$WORKSPACE/report.txt");
	}
	assert_true(inws);
	for (size_t i = 0; i < p->allow_extra.n; i++)
		sys |= !strcmp(p->allow_extra.v[i], "sethostname");
	assert_true(ro);
	assert_false(aws);
	assert_true(ssh);
	assert_true(sys);
	assert_int_equal(p->allow_extra.n, 1);
	assert_int_equal(p->limits.memory, w->limits.memory);
	policy_free(p);
	policy_free(w);
	free(text);
	wl_free(&l);
}

/* the structured list, as JSON: every refusal with its proposal */
static void test_json(void **state)
{
	struct wl_base b = base();
	struct wl_list l = { 0 };
	json_object *j, *a, *e, *v;

	wl_add(&l, WL_PROXY, "pypi.org:443", "proxy", "refused", "network.allow", "pypi.org:443", 0);
	wl_add(&l, WL_SYSCALL, "ptrace", "ptrace", "denied", NULL, NULL, 0);
	wl_settle(&l, &b);
	j = wl_to_json(&l, &b);
	assert_true(json_object_object_get_ex(j, "refusals", &a));
	assert_int_equal(json_object_array_length(a), 2);
	e = json_object_array_get_idx(a, 0);
	assert_true(json_object_object_get_ex(e, "op", &v));
	assert_string_equal(json_object_get_string(v), "proxy");
	assert_true(json_object_object_get_ex(e, "proposal", &v));
	assert_true(json_object_object_get_ex(v, "value", &v));
	assert_string_equal(json_object_get_string(v), "pypi.org:443");
	e = json_object_array_get_idx(a, 1);
	assert_true(json_object_object_get_ex(e, "proposal", &v));
	assert_null(v);
	assert_true(json_object_object_get_ex(j, "complete", &v));
	assert_true(json_object_get_boolean(v));
	json_object_put(j);
	wl_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dns),
		cmocka_unit_test(test_dns_long),
		cmocka_unit_test(test_sockaddr),
		cmocka_unit_test(test_danger),
		cmocka_unit_test(test_settle),
		cmocka_unit_test(test_policy_valid),
		cmocka_unit_test(test_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
