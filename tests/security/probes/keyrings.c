/* Kernel keyrings are not namespaced: keys of the same uid on the host
 * (kerberos tickets, ecryptfs, dm-crypt) could be read or planted.
 * add_key, request_key and keyctl must all fail. */
#include <sys/syscall.h>

#include "probe.h"

#define KEY_SPEC_SESSION_KEYRING -3
#define KEY_SPEC_USER_KEYRING    -4
#define KEYCTL_GET_KEYRING_ID    0
#define KEYCTL_JOIN_SESSION_KEYRING 1

int main(void)
{
	must_fail(syscall(SYS_add_key, "user", "warden-probe", "x", 1,
	                  KEY_SPEC_SESSION_KEYRING), "add_key(session)");
	must_fail(syscall(SYS_add_key, "user", "warden-probe", "x", 1,
	                  KEY_SPEC_USER_KEYRING), "add_key(user)");
	must_fail(syscall(SYS_request_key, "user", "warden-probe", NULL,
	                  KEY_SPEC_SESSION_KEYRING), "request_key");
	must_fail(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0),
	          "keyctl(GET_KEYRING_ID, user)");
	must_fail(syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL),
	          "keyctl(JOIN_SESSION_KEYRING)");
	BLOCKED("%s", probe_notes);
}
