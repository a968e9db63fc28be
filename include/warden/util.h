/* Small shared helpers: scope cleanup, checked parsing of sizes/durations. */
#ifndef WARDEN_UTIL_H
#define WARDEN_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "warden/err.h"

static inline void freep(void *p) { free(*(void **)p); }
static inline void closep(int *fd) { if (*fd >= 0) close(*fd); }

#define _cleanup_free_  __attribute__((cleanup(freep)))
#define _cleanup_close_ __attribute__((cleanup(closep)))
/* Close *fd (and set it to -1) without waiting for a slow release: a
 * helper process takes the last reference (common/closer.c). */
void wclose_later(int *fd);

/* Hand ownership over explicitly: returns the pointer and NULLs the source. */
#define steal_pointer(pp) ({ __typeof__(*(pp)) _p = *(pp); *(pp) = NULL; _p; })
/* Same for fds: returns the fd and sets the source to -1. */
#define steal_fd(fdp) ({ int _f = *(fdp); *(fdp) = -1; _f; })

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* "512", "64K", "1M", "1G", "2T" (binary multiples); "0" allowed.
 * Rejects negatives, junk, overflow.  Returns 0 or -1 with err set. */
int parse_size(const char *s, uint64_t *out, struct werr *err);
/* "250ms", "5s", "5m", "2h", "30" (seconds).  Result in milliseconds. */
int parse_duration_ms(const char *s, uint64_t *out, struct werr *err);
/* Decimal unsigned integer, no sign, no junk. */
int parse_u64(const char *s, uint64_t *out, struct werr *err);

/* Human format: "512M", "1.5G", "4096" (for policy show and messages). */
void format_size(uint64_t v, char *buf, size_t len);
void format_duration_ms(uint64_t ms, char *buf, size_t len);

/* Write the whole buffer, retrying on EINTR/short writes. */
int write_all(int fd, const void *buf, size_t len);
/* Read at most max + 1 bytes of a file into a NUL-terminated malloc'd
 * buffer, keeping the length (NUL bytes in the file are not lost).
 * *len == max + 1 means the file is larger than max: the caller words the
 * error.  Read errors carry errno (EISDIR for a directory). */
int read_file_buf(const char *path, size_t max, char **out, size_t *len, struct werr *err);
/* The same from an open fd, from where it stands; name is for messages. */
int read_fd_buf(int fd, const char *name, size_t max, char **out, size_t *len, struct werr *err);
/* Read a small file (< max bytes) into a NUL-terminated malloc'd buffer. */
int read_file_str(const char *path, size_t max, char **out, struct werr *err);
/* Write a string to a file that already exists (procfs, cgroupfs). */
int write_file_str(const char *path, const char *s, struct werr *err);
/* /proc/NAME/stat under procfd (NAME a pid's directory), read into buf; the
 * text after the comm field (") "), which starts with the state letter, or
 * NULL.  comm is chosen by the process and may hold spaces or ')': it is
 * skipped from the last ')'. */
const char *proc_stat_fields(int procfd, const char *name, char *buf, size_t len);

/* mkdir -p with mode; existing directories are fine. */
int mkdir_p(const char *path, int mode, struct werr *err);

/* WARDEN_TIMING=1: a start-up profile on stderr, from exec to exit
 * (common/timing.c).  wtiming prints how long since the previous call
 * ("what" NULL only starts the clock); the marks split the whole life of
 * the process into the closing breakdown that wtiming_main arranges. */
void wtiming(const char *what);
enum wtiming_mark {
	WT_EXEC,        /* the program was exec'd in the jail */
	WT_EXITED,      /* its exit reached the supervisor */
	WT_REPORTED,    /* its status known and reported (audit, --json) */
	WT__N
};
/* First thing in main: how long the process took to reach main (exec,
 * dynamic loading, library constructors), and the breakdown at exit. */
void wtiming_main(void);
void wtiming_mark(enum wtiming_mark m);

/* SHA-256 of len bytes as 64 hex digits (common/sha256.c, libnettle). */
void sha256_hex(const void *data, size_t len, char out[65]);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
