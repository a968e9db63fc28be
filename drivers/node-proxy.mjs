// warden's proxy preload for Node (network mode "proxy"; supervisor/env.c
// puts it in NODE_OPTIONS as --import data:...).  Node's fetch (its bundled
// undici) and its http/https modules ignore HTTP_PROXY and HTTPS_PROXY; in
// the jail nothing but warden's proxy is reachable, so without this every
// request of a Node program would fail.  This module routes both through
// the proxy with CONNECT tunnels (TLS stays end to end), and leaves the
// hosts of NO_PROXY (the jail's own lo) direct.  It runs inside the jail
// with the program's rights: it grants nothing, the proxy decides.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';

const env = process.env;
const raw = env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy || '';
let proxy = null;
try {
	proxy = raw ? new URL(raw) : null;
} catch (e) {
	proxy = null;
}

if (proxy && proxy.protocol === 'http:') {
	const phost = proxy.hostname.replace(/^\[|\]$/g, '');
	const pport = Number(proxy.port) || 80;
	const noProxy = (env.NO_PROXY || env.no_proxy || '').split(',')
		.map((s) => s.trim().toLowerCase()).filter(Boolean);
	const bare = (h) => String(h || '').replace(/^\[|\]$/g, '').toLowerCase();
	const direct = (host) => {
		const h = bare(host);
		return noProxy.some((n) => n === '*' || h === n ||
			(n.startsWith('.') ? h.endsWith(n) : h.endsWith('.' + n)));
	};
	const hostport = (h, port) => (h.includes(':') ? `[${h}]` : h) + ':' + port;

	// A socket to host:port through the proxy; cb(err, socket), once.
	const tunnel = (host, port, cb) => {
		const hp = hostport(bare(host), port);
		const s = net.connect(pport, phost);
		let buf = Buffer.alloc(0);
		let done = false;
		const fail = (e) => {
			if (done)
				return;
			done = true;
			s.destroy();
			cb(e);
		};
		const ondata = (d) => {
			buf = Buffer.concat([buf, d]);
			const end = buf.indexOf('\r\n\r\n');
			if (end < 0) {
				if (buf.length > 65536)
					fail(new Error(`warden proxy: CONNECT ${hp}: response header too long`));
				return;
			}
			s.removeListener('data', ondata);
			const head = buf.toString('latin1', 0, end);
			const line = head.split('\r\n')[0];
			if (!/^HTTP\/1\.[01] 2\d\d\b/.test(line)) {
				const body = buf.toString('utf8', end + 4, end + 4 + 1024).trim();
				const e = new Error(`warden proxy refused CONNECT ${hp}: ${line}` +
					(body ? `: ${body}` : ''));
				e.code = 'EPROXYREFUSED';
				fail(e);
				return;
			}
			s.removeListener('error', fail);
			if (buf.length > end + 4)
				s.unshift(buf.subarray(end + 4));
			done = true;
			cb(null, s);
		};
		s.on('error', fail);
		s.on('data', ondata);
		s.on('connect', () => s.write(`CONNECT ${hp} HTTP/1.1\r\nHost: ${hp}\r\n\r\n`));
	};

	// TLS over a tunnel (or directly for NO_PROXY hosts); cb once.
	const secure = (sock, opts, cb) => {
		const host = bare(opts.servername || opts.hostname || opts.host);
		// host: what the certificate is checked against (an IP too)
		const t = tls.connect({ ...opts, socket: sock, host, port: undefined,
			path: undefined, servername: net.isIP(host) ? undefined : host });
		let done = false;
		const once = (e, v) => {
			if (!done) {
				done = true;
				cb(e, v);
			}
		};
		t.once('secureConnect', () => once(null, t));
		t.once('error', (e) => once(e));
	};

	const open = (opts, tlsWanted, cb) => {
		const host = opts.hostname || opts.host || 'localhost';
		const port = Number(opts.port) || (tlsWanted ? 443 : 80);
		if (direct(host)) {
			const s = net.connect(port, bare(host));
			if (!tlsWanted) {
				let done = false;
				s.once('connect', () => { if (!done) { done = true; cb(null, s); } });
				s.once('error', (e) => { if (!done) { done = true; cb(e); } });
				return;
			}
			s.once('error', () => {});
			return secure(s, opts, cb);
		}
		tunnel(host, port, (err, s) => {
			if (err)
				return cb(err);
			if (!tlsWanted)
				return cb(null, s);
			secure(s, opts, cb);
		});
	};

	// fetch: undici's global dispatcher, an Agent with this connector.  The
	// default dispatcher only exists after a first fetch: made then (with a
	// data: URL, which touches no network), and replaced, once; a dispatcher
	// the program installed itself before its first fetch is left alone.
	const G = Symbol.for('undici.globalDispatcher.1');
	const realFetch = globalThis.fetch;
	if (typeof realFetch === 'function') {
		let installed = false;
		const install = () => {
			if (installed)
				return;
			installed = true;
			if (globalThis[G])
				return;
			try {
				realFetch('data:,').catch(() => {});
			} catch (e) {
				return;
			}
			const d = globalThis[G];
			if (d && typeof d.constructor === 'function')
				globalThis[G] = new d.constructor({
					connect: (o, cb) => open(o, o.protocol === 'https:', cb),
				});
		};
		globalThis.fetch = function fetch(input, init) {
			install();
			return realFetch(input, init);
		};
	}

	// http.get/https.get and libraries on the global agents.
	class HttpTunnel extends http.Agent {
		createConnection(o, cb) { open(o, false, cb); }
	}
	class HttpsTunnel extends https.Agent {
		createConnection(o, cb) { open(o, true, cb); }
	}
	http.globalAgent = new HttpTunnel({ keepAlive: true });
	https.globalAgent = new HttpsTunnel({ keepAlive: true });
}
