/* A DNS query's name, read by two parsers of the jail's words: the learner
 * (from a program's memory, learn/net.c) and the jail's init (from a packet
 * the network watch caught, jail/netseen.c).  One parser, one char set. */
#ifndef WARDEN_DNSQ_H
#define WARDEN_DNSQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The first name asked in a DNS query (RFC 1035 header: QR 0, opcode 0,
 * one question; no compression pointer), lowercased, dots between labels,
 * into name (at least 256 bytes): the offset just past the question (its
 * type and class), or -1 when msg is not such a query, or a label holds a
 * character wdns_host_char refuses, or the name is longer than 253. */
int wdns_query_name(const uint8_t *msg, size_t len, char *name, size_t cap);
/* A character of a host name's label as warden takes it: a-z, 0-9, '-',
 * '_' (after lowercasing). */
bool wdns_host_char(char c);

#endif
