/* Languages: a table (supervisor/lang.c).  Every language runs through a
 * small driver (drivers/<name>.*, compiled into warden) that its own
 * interpreter runs inside the jail as an ordinary jailed program.  The
 * driver talks to the supervisor on fd 4 (WLANG_CONTROL_FD), a SOCK_STREAM
 * socket, with text frames:
 *
 *   supervisor -> driver   "R <len>\n" then exactly <len> bytes of code
 *                          (UTF-8, no NUL).  EOF on fd 4: exit 0.
 *   driver -> supervisor   "D <status>\n" when the block is finished and its
 *                          stdout/stderr are flushed; <status> is 0..255:
 *                          0 ok, 1 an error/exception (its traceback is on
 *                          stderr), 130 interrupted (SIGINT), or the code's
 *                          own exit status (sys.exit(3) -> 3, and the
 *                          session goes on where the language allows).
 *   driver -> supervisor   while a block runs, before its "D":
 *                          "A <line>\n" the block's running line (1-based),
 *                          "M <png|jpeg|html> <len>\n" then <len> bytes:
 *                          an image or HTML the block displayed
 *                          (supervisor/rich.h has the bounds).
 *
 * Nothing is ever signalled through stdout or stderr, so code that prints
 * marker-like text cannot confuse a session.  The supervisor treats every
 * byte from fd 4 as hostile: anything but a well-formed "D", "A" or "M" ends the
 * jail.  SIGINT is sent to the driver's whole process group; each driver
 * installs a SIGINT handler (pid 1 of a pid namespace ignores signals it
 * has no handler for) and turns it into the language's interrupt
 * (KeyboardInterrupt, ...).  A persistent driver keeps globals, functions,
 * imports and the working directory from one block to the next. */
#ifndef WARDEN_LANG_H
#define WARDEN_LANG_H

#include <stdbool.h>
#include <stddef.h>

#define WLANG_CONTROL_FD 4

struct wlang {
	const char *name;             /* "python" */
	const char *aliases;          /* "py,python3" (comma-separated, may be "") */
	const char *driver;           /* file name under drivers/: "python.py" */
	/* argv to start the driver; argv[0] is looked up on the jail's PATH and
	 * the element "@DRIVER@" is replaced by the driver's source text. */
	const char *const *argv;
	bool persistent;              /* state survives between blocks */
	const char *program;          /* what must be installed, when argv[0]
	                                 is only a wrapper (sh); NULL: argv[0] */
	/* an interrupt's SIGINT is sent again this often until the block ends
	 * (0: once).  Perl acts on a signal between two of its ops: one that
	 * lands just before a blocking call waits for the call to return. */
	unsigned sigint_repeat_ms;
};

extern const struct wlang wlangs[];
extern const size_t wlangs_n;

/* Embedded driver sources (generated from drivers/ by tools/embed-drivers.sh). */
struct wdriver_src { const char *file; const char *text; };
extern const struct wdriver_src wdriver_srcs[];
extern const size_t wdriver_srcs_n;
/* The embedded text of drivers/<file>, or NULL. */
const char *wdriver_text(const char *file);

/* By name or alias, case-insensitive; NULL when unknown. */
const struct wlang *wlang_find(const char *name);
/* program (or argv[0]) exists and is executable under /usr/local/bin, /usr/bin or /bin
 * (what every built-in profile binds and puts on PATH). */
bool wlang_installed(const struct wlang *l);
/* A NULL-terminated malloc'd argv with @DRIVER@ replaced; free with
 * wlang_argv_free.  NULL when the driver source is missing. */
char **wlang_argv(const struct wlang *l);
void wlang_argv_free(char **argv);
/* The installed languages as JSON text (malloc'd):
 *   [{"name":"python","aliases":["py","python3"],"persistent":true}, ...] */
char *wlang_json(void);
/* "python, javascript, shell, ..." (installed ones, malloc'd), for errors. */
char *wlang_names(void);

#endif
