/* Replays a libFuzzer target's inputs without libFuzzer: linked with one
 * tests/fuzz/fuzz_*.c (make unit builds each as BUILD/tests/fuzz_NAME, in
 * build-asan/ under ASan and UBSan), so that make test feeds every target
 * its corpus and its regression inputs, which only make fuzz did.
 *
 *   fuzz_NAME PATH...   each PATH a file or a directory of files (not
 *                       recursive); one TAP test per PATH.
 *
 * A crash or an abort() of the target (its own checks) ends the process,
 * which tests/run.sh counts as a failure (the plan is not met, the status
 * is not 0); the input that did it is named on stderr first.  A PATH with
 * no input, or one that cannot be read, is a failed test: a replay that
 * fed nothing must not pass. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The sanitizers' hook, when they are linked in (weak: a plain build runs
 * without it, and the signal handler below names the input instead). */
void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

static char current[8400] = "none (before the first)";

static void say_current(void)
{
	/* async-signal-safe: called from a signal handler or a dying ASan */
	static const char pre[] = "# replay: the input that failed: ";
	static volatile sig_atomic_t said;

	if (said)
		return;
	said = 1;
	if (write(2, pre, sizeof(pre) - 1) < 0 || write(2, current, strlen(current)) < 0 ||
	    write(2, "\n", 1) < 0)
		return;
}

static void on_fatal(int sig)
{
	say_current();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* One file: 0 fed, -1 unreadable (errno). */
static int feed(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return -1;
	snprintf(current, sizeof(current), "%s", path);
	for (;;) {
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap ? cap * 2 : 4096);
			if (!nb) {
				fclose(f);
				free(buf);
				errno = ENOMEM;
				return -1;
			}
			buf = nb;
			cap = cap ? cap * 2 : 4096;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		fclose(f);
		free(buf);
		errno = EIO;
		return -1;
	}
	fclose(f);
	/* a copy of exactly len bytes, so that ASan sees a read past the end */
	{
		uint8_t *exact = malloc(len ? len : 1);
		if (!exact) {
			free(buf);
			errno = ENOMEM;
			return -1;
		}
		memcpy(exact, buf, len);
		free(buf);
		LLVMFuzzerTestOneInput(exact, len);
		free(exact);
		/* past it: a report from here on (a leak, at exit) is not its */
		snprintf(current, sizeof(current), "none (after %s: at exit, a leak is of "
		         "any input; replay them one by one)", path);
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One PATH: the number of inputs fed, -1 with why[] on a failure. */
static long replay(const char *path, char *why, size_t whylen)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	long fed = 0;

	if (stat(path, &st) < 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (feed(path) < 0) {
			snprintf(why, whylen, "%s", strerror(errno));
			return -1;
		}
		return 1;
	}
	d = opendir(path);
	if (!d) {
		snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*names));
			if (!nn)
				abort();
			names = nn;
		}
		if (!(names[n] = malloc(strlen(path) + strlen(e->d_name) + 2)))
			abort();
		sprintf(names[n++], "%s/%s", path, e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), by_name);   /* the same order every run */
	for (size_t i = 0; i < n; i++) {
		if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
			if (feed(names[i]) < 0) {
				snprintf(why, whylen, "%s: %s", names[i], strerror(errno));
				fed = -1;
				break;
			}
			fed++;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (fed == 0)
		snprintf(why, whylen, "no input in it");
	return fed > 0 ? fed : -1;
}

int main(int argc, char **argv)
{
	/* under ASan only SIGABRT (a target's own abort(), or the sanitizers'
	 * abort_on_error after their report): its SEGV handler reports the rest */
	static const int fatal[] = { SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL };
	size_t nfatal = sizeof(fatal) / sizeof(fatal[0]);
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	int failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE-OR-DIRECTORY...\n", name);
		return 2;
	}
	if (__sanitizer_set_death_callback) {
		__sanitizer_set_death_callback(say_current);
		nfatal = 1;
	}
	for (size_t i = 0; i < nfatal; i++)
		signal(fatal[i], on_fatal);
	printf("1..%d\n", argc - 1);
	fflush(stdout);
	for (int i = 1; i < argc; i++) {
		char why[512] = "";
		long fed = replay(argv[i], why, sizeof(why));

		if (fed < 0) {
			printf("not ok %d - %s: %s: %s\n", i, name, argv[i], why);
			failed = 1;
		} else {
			printf("ok %d - %s: %s (%ld input%s)\n", i, name, argv[i], fed, fed == 1 ? "" : "s");
		}
		fflush(stdout);
	}
	return failed;
}
