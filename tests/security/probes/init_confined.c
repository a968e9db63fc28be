/* pid 1 of the jail is warden's init, and it is confined exactly like the
 * program: /proc/1/status shows Seccomp 2 with as many filters as ours,
 * NoNewPrivs 1 and every capability set empty; it is not us; and it is
 * non-dumpable, so the program cannot read its memory or environment
 * (/proc/1/mem, /proc/1/environ) nor signal it to death. */
#include <fcntl.h>
#include <signal.h>

#include "probe.h"

struct st { long nnp, sec, filters; char capeff[256], capprm[256], capbnd[256], capamb[256]; };

static void read_status(const char *path, struct st *s)
{
	char line[256];
	FILE *f = fopen(path, "re");

	memset(s, 0, sizeof(*s));
	s->nnp = s->sec = s->filters = -1;
	if (!f)
		PROBE_FAIL("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "NoNewPrivs:", 11)) s->nnp = atol(line + 11);
		else if (!strncmp(line, "Seccomp:", 8)) s->sec = atol(line + 8);
		else if (!strncmp(line, "Seccomp_filters:", 16)) s->filters = atol(line + 16);
		else if (!strncmp(line, "CapEff:", 7)) snprintf(s->capeff, sizeof(s->capeff), "%s", line + 8);
		else if (!strncmp(line, "CapPrm:", 7)) snprintf(s->capprm, sizeof(s->capprm), "%s", line + 8);
		else if (!strncmp(line, "CapBnd:", 7)) snprintf(s->capbnd, sizeof(s->capbnd), "%s", line + 8);
		else if (!strncmp(line, "CapAmb:", 7)) snprintf(s->capamb, sizeof(s->capamb), "%s", line + 8);
	}
	fclose(f);
}

static int zero_caps(const char *v)
{
	return v[0] && strspn(v, "\t 0") == strlen(v);
}

int main(void)
{
	struct st me, init;
	char buf[64];
	int fd;

	if (getpid() == 1)
		ESCAPED("the program is pid 1: no init of warden's runs in the jail");
	if (access("/proc/1", F_OK) < 0 && errno == ENOENT && kill(1, 0) == 0) {
		/* hidepid=invisible hides a non-dumpable init from an
		 * unprivileged jail (no uid 0 in it): its status cannot be read,
		 * which is stronger still; the root pass reads it */
		note("pid 1 runs but is invisible in /proc (hidepid, non-dumpable)");
		goto memory;
	}
	read_status("/proc/self/status", &me);
	read_status("/proc/1/status", &init);
	if (init.sec != 2)
		ESCAPED("pid 1 Seccomp: %ld", init.sec);
	if (init.nnp != 1)
		ESCAPED("pid 1 NoNewPrivs: %ld", init.nnp);
	if (init.filters != me.filters)
		ESCAPED("pid 1 has %ld seccomp filters, the program %ld", init.filters, me.filters);
	if (!zero_caps(init.capeff) || !zero_caps(init.capprm) || !zero_caps(init.capbnd) ||
	    !zero_caps(init.capamb))
		ESCAPED("pid 1 holds capabilities: eff %s prm %s bnd %s amb %s", init.capeff,
		        init.capprm, init.capbnd, init.capamb);
	note("pid 1: Seccomp 2 (%ld filters), NoNewPrivs 1, no capabilities", init.filters);
memory:
	fd = open("/proc/1/mem", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		ESCAPED("/proc/1/mem opened: init's memory is readable");
	note("/proc/1/mem: %s", strerror(errno));
	fd = open("/proc/1/environ", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		ESCAPED("/proc/1/environ readable");
	note("/proc/1/environ: unreadable");
	/* SIGKILL from inside the namespace is ignored by its init */
	kill(1, SIGKILL);
	usleep(100000);
	if (kill(1, 0) < 0)
		ESCAPED("init died of SIGKILL sent from inside the jail");
	note("SIGKILL from inside: ignored");
	BLOCKED("%s", probe_notes);
}
