/* make bench: the floor of any relaying process.  Runs PROGRAM with its
 * stdout on a pipe and moves that pipe to our stdout with blocking
 * splice(2), nothing else: what warden's relay is compared with when it
 * has to relay (an output limit, a terminal, an unprivileged caller). */
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int p[2];

	if (argc < 2 || pipe2(p, O_CLOEXEC) < 0)
		return 2;
	(void)fcntl(p[0], F_SETPIPE_SZ, 1 << 20);
	if (fork() == 0) {
		dup2(p[1], 1);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	close(p[1]);
	while (splice(p[0], NULL, 1, NULL, 1 << 20, SPLICE_F_MOVE) > 0)
		;
	wait(NULL);
	return 0;
}
