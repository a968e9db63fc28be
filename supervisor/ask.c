/* A question to the person at `warden chat`'s terminal, asked by the
 * supervisor itself (issue 23: "allow read for this session?", "replace
 * this profile?").  The broker talks to the model and is treated as
 * compromised (SECURITY.md, threat model), so an answer that widens what
 * jails may do must not be one the broker could give or fake:
 *
 *   1. the broker is stopped (SIGSTOP, waited for: every thread of it;
 *      it makes no process of its own, G18), so nothing of it runs while
 *      the question is on the screen: it cannot read the answer, type one
 *      (TIOCSTI), or draw over the question;
 *   2. the terminal's pending input is discarded: nothing typed or
 *      injected before the question answers it;
 *   3. colours and the character set are reset, so what the broker
 *      printed before cannot hide the question;
 *   4. one line is read, in canonical mode with echo and without signals
 *      (Ctrl-C is only a character: "no");
 *   5. the terminal's modes are put back, and the broker continued, on
 *      every path.
 * The loop waits meanwhile, as it does for EDIT's editor: only chat asks,
 * and chat has one session, idle while it asks. */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "ask.h"
#include "session.h"
#include "sv.h"
#include "warden/util.h"

/* The broker, stopped: true once the kernel says every thread is. */
static bool stop_broker(pid_t pid)
{
	siginfo_t si;

	if (pid <= 0 || kill(pid, SIGSTOP) < 0)
		return false;
	for (;;) {
		memset(&si, 0, sizeof(si));
		/* WNOWAIT: an exit stays for the broker's pidfd (server.c) */
		if (waitid(P_PID, (id_t)pid, &si, WSTOPPED | WEXITED | WNOWAIT) == 0)
			return si.si_code == CLD_STOPPED;
		if (errno != EINTR)
			return false;
	}
}

int sv_ask(struct sv *sv, const char *question, bool word_yes, bool can_always,
           enum sv_answer *out, struct werr *err)
{
	static const char reset[] = "\r\033[0m\017\033(B\n";
	struct termios old, t;
	char line[128];
	size_t n = 0;
	bool have_old, stopped;
	int rc = 0;

	*out = SVA_NO;
	if (!sv->edit_ok)
		return werr_set(err, 0, "warden asks on chat's terminal only, and there is none");
	stopped = stop_broker(sv->broker_pid);
	if (!stopped) {
		kill(sv->broker_pid, SIGCONT);
		return werr_set(err, 0, "the broker could not be stopped to ask you");
	}
	(void)tcflush(0, TCIFLUSH);
	have_old = tcgetattr(0, &old) == 0;
	if (have_old) {
		t = old;
		t.c_lflag |= ICANON | ECHO;
		t.c_lflag &= ~(tcflag_t)ISIG;
		t.c_iflag |= ICRNL;
		(void)tcsetattr(0, TCSANOW, &t);
	}
	if (write_all(1, reset, sizeof(reset) - 1) < 0 || write_all(1, question, strlen(question)) < 0)
		rc = werr_set(err, errno, "writing the question to the terminal");
	while (rc == 0) {
		char c;
		ssize_t k = read(0, &c, 1);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0 || c == '\n')
			break;
		if (n < sizeof(line) - 1)
			line[n++] = c;
	}
	line[n] = '\0';
	if (have_old)
		(void)tcsetattr(0, TCSANOW, &old);
	(void)tcflush(0, TCIFLUSH);
	kill(sv->broker_pid, SIGCONT);
	if (rc < 0)
		return -1;
	/* the answer: trimmed, any case */
	{
		char *a = line, *e;

		while (isspace((unsigned char)*a))
			a++;
		for (e = a + strlen(a); e > a && isspace((unsigned char)e[-1]); e--)
			;
		*e = '\0';
		for (char *p = a; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		if (word_yes)
			*out = !strcmp(a, "yes") ? SVA_YES : SVA_NO;
		else if (!strcmp(a, "y") || !strcmp(a, "yes"))
			*out = SVA_YES;
		else if (can_always && (!strcmp(a, "a") || !strcmp(a, "always")))
			*out = SVA_ALWAYS;
	}
	return 0;
}

char *sv_shown(const char *s)
{
	const char *home = sv_caller_home();
	size_t hn = home ? strlen(home) : 0;
	struct sbuf b = { 0 };
	char *clean;

	/* the home as ~, as the person knows it */
	if (hn > 1 && !strncmp(s, home, hn) && (s[hn] == '/' || !s[hn])) {
		sbuf_addc(&b, '~');
		s += hn;
	}
	/* the path is the broker's (and the jail's) word: no byte of it
	 * reaches the terminal as a control */
	clean = wsan_str(s, strlen(s));
	for (const char *p = clean; *p; p++) {
		if (*p == '\n')
			sbuf_adds(&b, "^J");
		else if (*p == '\t')
			sbuf_adds(&b, "^I");
		else
			sbuf_addc(&b, *p);
	}
	free(clean);
	return b.d ? sbuf_steal(&b) : xstrdup("");
}
