/* warden chat (broker side): the conversation loop.  Private to the broker.
 *
 * chat_main (broker.h) runs after the broker confined itself.  Two things a
 * chat needs cannot be opened after that: the replay recording given with
 * --model replay:FILE (outside the data directory) and the file named by
 * --export-script.  chat_preload, called by main.c before broker_confine,
 * takes care of both; it never fails the start: errors are reported again,
 * properly, by chat_main.  It also gives the TCP ports the confined broker
 * may connect to (broker_confine): 443, 80, 53 (DNS over TCP), the port
 * of the model's endpoint (--api-base or config.json's api_base, ollama's
 * 11434 by default) and of a proxy named by the environment. */
#ifndef BROKER_CHAT_H
#define BROKER_CHAT_H

#include "broker.h"

#define CHAT_PORTS_MAX 16
void chat_preload(int argc, char **argv, const struct bdirs *d, uint16_t *ports, size_t *n_ports);

#endif
