/* warden-broker: the unprivileged half.  The supervisor starts it with the
 * supervisor socket on fd 3 (BROKER_SUP_FD); it confines itself before it
 * reads any input (broker/core/confine.c), then runs one mode:
 *
 *   warden-broker serve --stdio [...]    JSON-lines API   (broker/api/api_stdio.c)
 *   warden-broker chat [...]             the LLM conversation (broker/chat/chat.c, chat.h)
 *   warden-broker mcp                    MCP on stdio     (broker/api/mcp_stdio.c, mcp.h)
 *
 * Each mode gets argv from its own name on (argv[0] = "serve" / "chat" / "mcp"). */
#ifndef BROKER_BROKER_H
#define BROKER_BROKER_H

#include <stddef.h>
#include <stdint.h>

#include "warden/err.h"

struct bdirs {
	char *config;   /* $XDG_CONFIG_HOME/warden (~/.config/warden), read-only */
	char *data;     /* $XDG_DATA_HOME/warden (~/.local/share/warden), read-write:
	                   conversations, line-editing history */
	/* Paths to open through: config and data themselves, or /proc/self/fd/N
	 * when the broker's user cannot walk them (as root: /root is 0700). */
	char *config_shown, *data_shown;   /* the paths as the user knows them */
	int config_fd, data_fd;            /* O_DIRECTORY from the supervisor; -1: use the paths */
};
/* From the fds the supervisor hands over (include/warden/broker_start.h);
 * fails, naming the directory and the fix, when the broker's user cannot
 * write data or read config. */
int bdirs_init(struct bdirs *d, struct werr *err);
void bdirs_free(struct bdirs *d);
/* text (a path, a message) with the directories as the user knows them,
 * not as /proc/self/fd/N, wherever they occur in it; malloc'd.  d may be
 * NULL (a copy). */
char *bdirs_shown(const struct bdirs *d, const char *text);
/* The other way: a path the person gave, with a directory as they know it,
 * as the broker must open it (under /proc/self/fd/N); malloc'd. */
char *bdirs_real(const struct bdirs *d, const char *path);

/* Files the command line named (--model replay:FILE, --resume FILE), opened
 * by the supervisor and handed over as fds 6 and 7.  bfiles_init takes
 * them (and closes those fds otherwise); bfile_read reads a handed file
 * when path is how the command line spelled it, else opens path. */
void bfiles_init(void);
int bfile_read(const char *path, size_t max, char **out, size_t *len, struct werr *err);

/* What the confined broker may still reach beyond its two directories. */
struct bconfine {
	const char *extra_rw;        /* one more read-write directory, or NULL */
	const uint16_t *tcp_ports;   /* the only TCP ports it may connect to (Landlock
	                                ABI 4+; none: no TCP at all) */
	size_t n_tcp_ports;
};

/* no_new_privs, then Landlock (config read-only, data read-write, the few
 * files name resolution reads, TCP connects to c's ports only), then a
 * seccomp filter that denies execve/execveat, ptrace, mount and namespace
 * calls and every socket family but AF_INET/AF_INET6.  c may be NULL.
 * Fails closed: a broker that cannot confine itself does not run (unless
 * Landlock is missing from the kernel, which is reported once on stderr). */
int broker_confine(const struct bdirs *d, const struct bconfine *c, struct werr *err);
/* 1 when this kernel's Landlock can restrict TCP ports (ABI 4+). */
int broker_tcp_confined(void);

int serve_main(int argc, char **argv, const struct bdirs *d);
int mcp_main(int argc, char **argv, const struct bdirs *d);
/* chat_main: chat.h (its options are parsed before confinement) */

#endif
