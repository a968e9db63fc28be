/* Raw packet sockets see (and forge) every frame on an interface, below
 * the network namespace's firewall.  socket(AF_PACKET) must fail, in
 * every flavour. */
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <sys/socket.h>

#include "probe.h"

int main(void)
{
	must_fail(socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)), "socket(AF_PACKET, RAW)");
	must_fail(socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL)), "socket(AF_PACKET, DGRAM)");
	must_fail(socket(AF_INET, SOCK_RAW, IPPROTO_RAW), "socket(AF_INET, RAW)");
	BLOCKED("%s", probe_notes);
}
