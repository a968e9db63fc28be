/* setid_bits: a setuid or setgid file (or setgid directory) made in the
 * workspace outlives the jail on the host.  As root it would be a setuid-root
 * binary, as a user a setuid binary of that user for whoever runs it.  Every
 * call that sets a mode must refuse S_ISUID and S_ISGID with EPERM: chmod,
 * fchmod, fchmodat, fchmodat2, open/openat/creat with O_CREAT or O_TMPFILE,
 * mkdir/mkdirat, mknod/mknodat.  openat2 (whose mode lives in memory, out of
 * the filter's sight) must answer ENOSYS.  The same calls without the bits,
 * and with junk above the 16 bits of a mode, must still work. */
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <linux/openat2.h>

#include "probe.h"

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif

/* A denied call: EPERM and nothing set-id left behind. */
static void must_deny(long rc, const char *what)
{
	if (rc >= 0)
		ESCAPED("%s succeeded (returned %ld)", what, rc);
	if (errno != EPERM)
		ESCAPED("%s failed with %s, not EPERM: the filter did not deny it",
		        what, strerrorname_np(errno));
	note("%s: EPERM", what);
}

static void must_work(long rc, const char *what)
{
	if (rc < 0)
		PROBE_FAIL("%s should work: %s", what, strerrorname_np(errno));
}

static void no_setid(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)))
		ESCAPED("%s has mode %o", path, st.st_mode & 07777);
}

int main(void)
{
	static const char *const made[] = { "sb-open", "sb-openat", "sb-creat", "sb-dir",
	                                    "sb-dirat", "sb-node", "sb-nodeat", "sb-tmp" };
	struct open_how how = { .flags = O_CREAT | O_WRONLY, .mode = 04755 };
	const unsigned long junk = 0xabc00000000ULL;
	int fd, dfd;

	must_work(fd = open("sb-file", O_CREAT | O_WRONLY | O_CLOEXEC, 0755), "open(O_CREAT, 0755)");
	must_work(mkdir("sb-plain", 0755), "mkdir(0755)");
	must_work(chmod("sb-file", 0700), "chmod(0700)");
	must_work(syscall(__NR_chmod, "sb-file", junk | 0755), "chmod(0755 | junk above 32 bits)");
	must_work(fchmod(fd, 0644), "fchmod(0644)");
	must_work(dfd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC), "open(.)");

	must_deny(chmod("sb-file", 04755), "chmod(04755)");
	must_deny(chmod("sb-file", 02755), "chmod(02755)");
	must_deny(syscall(__NR_chmod, "sb-file", junk | 04755), "chmod(04755 | junk)");
	must_deny(chmod("sb-plain", 02775), "chmod(dir, 02775)");
	must_deny(fchmod(fd, 04755), "fchmod(04755)");
	must_deny(fchmod(fd, 02711), "fchmod(02711)");
	must_deny(syscall(__NR_fchmodat, dfd, "sb-file", 06755), "fchmodat(06755)");
	must_deny(syscall(__NR_fchmodat2, dfd, "sb-file", 04755, 0), "fchmodat2(04755)");
	must_deny(open("sb-open", O_CREAT | O_WRONLY | O_CLOEXEC, 04755), "open(O_CREAT, 04755)");
	must_deny(syscall(__NR_openat, dfd, "sb-openat", O_CREAT | O_WRONLY | O_CLOEXEC, 02755),
	          "openat(O_CREAT, 02755)");
	must_deny(creat("sb-creat", 04711), "creat(04711)");
	must_deny(open(".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 04755), "open(O_TMPFILE, 04755)");
	must_deny(mkdir("sb-dir", 02755), "mkdir(02755)");
	must_deny(syscall(__NR_mkdirat, dfd, "sb-dirat", 02775), "mkdirat(02775)");
	must_deny(mknod("sb-node", S_IFREG | 04755, 0), "mknod(S_IFREG|04755)");
	must_deny(syscall(__NR_mknodat, dfd, "sb-nodeat", S_IFREG | 02755, 0), "mknodat(S_IFREG|02755)");
	/* openat2's mode is in memory, out of the filter's sight: ENOSYS, so
	 * libc falls back to openat, whose mode the filter reads */
	if (syscall(__NR_openat2, dfd, "sb-tmp", &how, sizeof(how)) >= 0)
		ESCAPED("openat2(O_CREAT, 04755) succeeded");
	if (errno != ENOSYS)
		ESCAPED("openat2 failed with %s, not ENOSYS", strerrorname_np(errno));
	note("openat2: ENOSYS");

	no_setid("sb-file");
	no_setid("sb-plain");
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		no_setid(made[i]);
		if (access(made[i], F_OK) == 0)
			ESCAPED("%s was created", made[i]);
	}
	BLOCKED("%s", probe_notes);
}
