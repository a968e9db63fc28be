/* How the supervisor hands the broker what it needs (supervisor/server.c
 * start_broker, broker/main.c).  The broker gets no path it must open by
 * itself outside these: as root it runs as its own user, which may not be
 * able to reach the caller's files by path (a checkout under /root, the
 * caller's home). */
#ifndef WARDEN_BROKER_START_H
#define WARDEN_BROKER_START_H

#define WBROKER_SUP_FD    3   /* the socketpair to the supervisor */
#define WBROKER_CONFIG_FD 4   /* O_DIRECTORY: the caller's config dir (read-only) */
#define WBROKER_DATA_FD   5   /* O_DIRECTORY: the caller's data dir (read-write) */
#define WBROKER_FILE_FD   6   /* first of the files named on the command line */
#define WBROKER_FILES_MAX 2   /* --model replay:FILE, --resume FILE */
/* serve --listen (supervisor/listen.c): the listening socket the supervisor
 * made (the broker accepts on it, it never binds), a pipe holding the
 * bearer token (never its file), and the TLS certificate and key files. */
#define WBROKER_LISTEN_FD 8
#define WBROKER_TOKEN_FD  9
#define WBROKER_CERT_FD   10
#define WBROKER_KEY_FD    11
#define WBROKER_LAST_FD   WBROKER_KEY_FD
#define WBROKER_EXTRA_FDS (WBROKER_LAST_FD - WBROKER_LISTEN_FD + 1)

/* The directories' paths, for the broker's messages only. */
#define WBROKER_ENV_CONFIG "WARDEN_CONFIG_DIR"
#define WBROKER_ENV_DATA   "WARDEN_DATA_DIR"
/* WARDEN_FILE_<fd>=PATH: fd <fd> is PATH, as the command line spelled it. */
#define WBROKER_ENV_FILE   "WARDEN_FILE_"
/* The recording `make demo` replays, where it is on this machine, for chat's
 * hint when there is no API key: found by the supervisor, as the caller (as
 * root the broker's user may not reach a checkout in /root). */
#define WBROKER_ENV_DEMO   "WARDEN_DEMO_RECORDING"

/* The broker's own system user when warden runs as root (--broker-user). */
#define WBROKER_USER "warden"

#endif
