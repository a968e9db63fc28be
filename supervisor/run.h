/* `warden run`'s engine (supervisor/run.c): its API, wrun(), is in
 * include/warden/supervisor.h, for the command front-end (cli/cmd_run.c)
 * and doctor. */
#ifndef WARDEN_RUN_H
#define WARDEN_RUN_H

#include "warden/supervisor.h"

#endif
