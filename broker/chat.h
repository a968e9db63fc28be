/* warden chat (broker side): the conversation loop.  Private to the broker.
 *
 * chat_main (broker.h) runs after the broker confined itself.  Two things a
 * chat needs cannot be opened after that: the replay recording given with
 * --model replay:FILE (outside the data directory) and the file named by
 * --export-script.  chat_preload, called by main.c before broker_confine,
 * takes care of both; it never fails the start: errors are reported again,
 * properly, by chat_main. */
#ifndef BROKER_CHAT_H
#define BROKER_CHAT_H

#include "broker.h"

void chat_preload(int argc, char **argv, const struct bdirs *d);

#endif
