/* warden's one-line diagnostics on stderr (common/log.c), for every layer:
 * common/, policy/, jail/, limits/ and supervisor/ alike. */
#ifndef WARDEN_LOG_H
#define WARDEN_LOG_H

/* "warden: <msg>" on stderr, one line. */
void wlog_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void wlog_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void wlog_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
