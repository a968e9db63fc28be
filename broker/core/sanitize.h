/* The terminal sanitizer moved to common/ (include/warden/sanitize.h), so
 * that `warden run` uses the same one without linking broker code. */
#ifndef BROKER_SANITIZE_H
#define BROKER_SANITIZE_H
#include "warden/sanitize.h"
#endif
