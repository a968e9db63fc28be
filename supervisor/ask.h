/* The supervisor's own question at chat's terminal (supervisor/ask.c says
 * how a compromised broker is kept out of it).  Private to supervisor/. */
#ifndef WARDEN_SV_ASK_H
#define WARDEN_SV_ASK_H

#include <stdbool.h>

#include "warden/err.h"
#include "warden/sanitize.h"

struct sv;
enum sv_answer { SVA_NO, SVA_YES, SVA_ALWAYS };

/* Ask question (its last line the prompt) on the terminal and read one
 * line: word_yes: only "yes" is yes; otherwise y/yes, and a/always when
 * can_always; anything else is no.  -1 (err) when it could not ask. */
int sv_ask(struct sv *sv, const char *question, bool word_yes, bool can_always,
           enum sv_answer *out, struct werr *err);
/* s for the terminal: the caller's home as ~, every control character
 * shown as text (malloc'd). */
char *sv_shown(const char *s);

#endif
