/* warden's version: `warden --version`, doctor, and the MCP server's
 * serverInfo (the broker reports it too, so it lives here, not in cli/). */
#ifndef WARDEN_VERSION_H
#define WARDEN_VERSION_H

#define WARDEN_VERSION "0.1.0"

#endif
