#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "warden/err.h"

int werr_set(struct werr *err, int errnum, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	size_t len;

	if (!err)
		return -1;
	err->errnum = errnum;
	err->exit_code = 0;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	len = strlen(err->msg);
	if (errnum && len < sizeof(err->msg) - 1)
		snprintf(err->msg + len, sizeof(err->msg) - len, ": %s", strerror(errnum));
	errno = saved;
	return -1;
}

int werr_wrap(struct werr *err, const char *fmt, ...)
{
	int saved = errno;
	char prefix[WERR_MSG_MAX];
	char old[WERR_MSG_MAX];
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	old[sizeof(old) - 1] = '\0';
	/* truncation is acceptable: the message stays one NUL-terminated line */
	{
		size_t pl = strnlen(prefix, sizeof(err->msg) - 3);
		memcpy(err->msg, prefix, pl);
		memcpy(err->msg + pl, ": ", 2);
		size_t room = sizeof(err->msg) - pl - 3;
		size_t ol = strnlen(old, room);
		memcpy(err->msg + pl + 2, old, ol);
		err->msg[pl + 2 + ol] = '\0';
	}
	errno = saved;
	return -1;
}

void werr_clear(struct werr *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
}

int werr_exit_code(const struct werr *err)
{
	return (err && err->exit_code) ? err->exit_code : 125;
}
