#include <stdarg.h>
#include <stdio.h>

#include "warden/log.h"

__attribute__((format(printf, 2, 0)))
static void vlog(const char *level, const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "warden: %s%s\n", level, buf);
}

void wlog_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void wlog_info(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void wlog_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}
