// warden's persistent JavaScript driver (supervisor/lang.h has the
// protocol).  Run as `node -e <this text>` inside the jail.  Reads
// "R <len>\n" + <len> bytes of UTF-8 code from fd 4 with the event loop (so
// timers and callbacks of earlier blocks keep running between blocks), runs
// each block as a script in this context (top-level var/let/const/function
// persist), flushes stdout/stderr and writes "D <status>\n" on fd 4.
// EOF on fd 4: exit 0.  Everything is inside this function so that the
// driver's names stay out of the global scope.
//
// Active line: before a block runs, `__warden_line__(N);` is put at the
// start of each of its top-level lines where a statement surely starts (the
// code before it ends with ';' or '}' outside any bracket, string, template
// or comment, and the line does not continue it: else, catch, '.', ...);
// the call writes "A N\n" on fd 4 when the line changes (supervisor/rich.h).
(function () {
	'use strict';
	const fs = require('fs');
	const net = require('net');
	const util = require('util');
	const vm = require('vm');
	const CTL = 4;
	const LIMIT = 1 << 30;

	// `node -e` already puts require/module/exports on globalThis; make sure.
	if (typeof globalThis.require !== 'function')
		globalThis.require = require;

	let buf = Buffer.alloc(0);
	let busy = false;            // a block is running
	let ended = false;           // EOF seen on fd 4
	let interrupt = null;        // rejects the awaited promise of a block
	let n = 0;

	function bad(msg) {
		try { fs.writeSync(2, 'warden javascript driver: ' + msg + '\n'); } catch (e) { }
		process.exit(2);
	}

	// pid 1 of a pid namespace ignores signals it has no handler for.  A
	// busy synchronous block is stopped by breakOnSigint; a block awaiting
	// a promise is stopped here; between blocks SIGINT is dropped.
	process.on('SIGINT', () => { if (interrupt) interrupt(); });
	// an exception thrown by a callback between blocks must not end the
	// session: print it, as the REPL does
	process.on('uncaughtException', (e) => { printError(e); });
	process.on('unhandledRejection', (e) => { printError(e); });

	function printError(e) {
		let text;
		if (e instanceof Error && typeof e.stack === 'string') {
			// cut the stack at the first frame of this driver
			const lines = e.stack.split('\n');
			const i = lines.findIndex(l => /^\s+at .*(node:vm:|\[eval\]|evalmachine)/.test(l));
			text = (i >= 0 ? lines.slice(0, i) : lines).join('\n');
		} else {
			text = 'Uncaught ' + util.inspect(e);
		}
		try { process.stderr.write(text + '\n'); } catch (x) { }
	}

	// Wait until what was written to a std stream has reached its pipe.
	function flushed(s) {
		return new Promise((resolve) => {
			if (!s || s.destroyed || !s.writable || s.writableEnded)
				return resolve();
			try { s.write('', () => resolve()); } catch (e) { resolve(); }
		});
	}

	// An interrupt that lands inside console.log, after the bytes reached
	// the pipe but before the stream noted it, leaves the stream "writing"
	// forever.  libuv has nothing queued (writeQueueSize 0): finish the
	// write as the stream would have.
	function unwedge(s) {
		const st = s && s._writableState;
		if (st && st.writing && s._handle && s._handle.writeQueueSize === 0 &&
		    typeof st.onwrite === 'function') {
			try { st.onwrite(null); } catch (e) { }
		}
	}

	function reply(status) {
		send('D ' + status + '\n');   // fd 4 is non-blocking under libuv: EAGAIN is retried
	}

	function send(text) {
		const msg = Buffer.from(text);
		for (let off = 0; off < msg.length;) {
			try {
				off += fs.writeSync(CTL, msg, off);
			} catch (e) {
				if (e.code === 'EAGAIN')
					continue;
				process.exit(3);
			}
		}
	}

	// every change of line while few were sent; past 1000 in a block (a
	// loop), at most one every 50 ms
	const lines = { last: 0, n: 0, t: 0 };
	Object.defineProperty(globalThis, '__warden_line__', {
		value: function (n) {
			if (!busy || n === lines.last)
				return;
			if (lines.n >= 1000) {
				const t = Date.now();
				if (t - lines.t < 50)
					return;
				lines.t = t;
			}
			lines.last = n;
			lines.n++;
			send('A ' + n + '\n');
		},
		enumerable: false, writable: false, configurable: false,
	});

	const CONT = /^(else\b|catch\b|finally\b|while\b|[.)\]},?:+\-*\/%&|^=<>!`]|in\b|instanceof\b|as\b)/;
	const REGEX_AFTER = '(,=:[!&|?{};+-*%<>~^';

	// The block with its top-level lines marked (see the top); code the
	// scanner cannot follow is left as it is.
	function markLines(code) {
		const out = [];
		const stack = [];       // '(', '[', '{', or '`' for a template's ${
		let i = 0, line = 1, lineStart = 0, prev = '', mode = null;
		let markable = true;    // at a line start: a statement may start here
		while (i <= code.length) {
			if (i === lineStart && mode === null && stack.length === 0 && markable) {
				const rest = code.slice(i, code.indexOf('\n', i) < 0 ? code.length
					: code.indexOf('\n', i)).trimStart();
				if (rest && !rest.startsWith('//') && !rest.startsWith('/*') && !CONT.test(rest))
					out.push('__warden_line__(' + line + ');');
			}
			if (i === code.length)
				break;
			const c = code[i], d = code[i + 1];
			out.push(c);
			i++;
			if (c === '\n') {
				line++;
				lineStart = i;
				if (mode === 'line')
					mode = null;
				markable = mode === null && (prev === '' || prev === ';' || prev === '}');
				continue;
			}
			if (mode === 'line')
				continue;
			if (mode === 'block') {
				if (c === '*' && d === '/') { out.push(d); i++; mode = null; }
				continue;
			}
			if (mode === "'" || mode === '"' || mode === 're') {
				if (c === '\\' && i < code.length) { out.push(code[i]); if (code[i] === '\n') { line++; lineStart = i + 1; } i++; continue; }
				if (mode === 're' && c === '[') { mode = 'rec'; continue; }
				if (c === mode || (mode === 're' && c === '/')) { mode = null; prev = 'x'; }
				continue;
			}
			if (mode === 'rec') {
				if (c === '\\' && i < code.length) { out.push(code[i]); i++; }
				else if (c === ']') mode = 're';
				continue;
			}
			if (mode === '`') {
				if (c === '\\' && i < code.length) { out.push(code[i]); if (code[i] === '\n') { line++; lineStart = i + 1; } i++; continue; }
				if (c === '`') { mode = null; prev = 'x'; }
				else if (c === '$' && d === '{') { out.push(d); i++; stack.push('`'); mode = null; prev = '{'; }
				continue;
			}
			if (c === ' ' || c === '\t' || c === '\r')
				continue;
			if (c === '/' && d === '/') { mode = 'line'; continue; }
			if (c === '/' && d === '*') { out.push(d); i++; mode = 'block'; continue; }
			if (c === '/' && (prev === '' || REGEX_AFTER.includes(prev))) { mode = 're'; continue; }
			if (c === "'" || c === '"' || c === '`') { mode = c; continue; }
			if (c === '(' || c === '[' || c === '{') stack.push(c);
			else if (c === ')' || c === ']' || c === '}') {
				const top = stack.pop();
				if (top === undefined)
					return code;            // unbalanced: leave it to the parser
				if (top === '`') { mode = '`'; continue; }
			}
			prev = c;
		}
		return mode === null && stack.length === 0 ? out.join('') : code;
	}

	function isInterrupt(e) {
		return e && e.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED';
	}

	async function runBlock(code) {
		const filename = 'block';
		n++;
		lines.last = lines.n = 0;
		code = markLines(code);
		let script;
		try {
			script = new vm.Script(code, { filename });
		} catch (e) {
			if (!(e instanceof SyntaxError) || !/await/.test(code))
				throw e;
			// top-level await: run the block as an async function (its own
			// declarations then stay local to it)
			script = new vm.Script('(async () => {\n' + code + '\n})()',
				{ filename, lineOffset: -1 });
		}
		let v = script.runInThisContext({ breakOnSigint: true, displayErrors: false });
		if (v !== null && (typeof v === 'object' || typeof v === 'function') &&
		    typeof v.then === 'function') {
			v = await Promise.race([Promise.resolve(v), new Promise((_, reject) => {
				interrupt = () => reject(Object.assign(new Error('interrupted'),
					{ code: 'ERR_SCRIPT_EXECUTION_INTERRUPTED' }));
			})]);
		}
		if (v !== undefined)
			process.stdout.write(util.inspect(v) + '\n');
	}

	async function run(code) {
		let status = 0;
		busy = true;
		try {
			await runBlock(code);
		} catch (e) {
			if (isInterrupt(e)) {
				status = 130;
				unwedge(process.stdout);
				unwedge(process.stderr);
				try { process.stderr.write('interrupted (SIGINT)\n'); } catch (x) { }
			} else {
				status = 1;
				printError(e);
			}
		}
		interrupt = null;
		await flushed(process.stdout);
		await flushed(process.stderr);
		reply(status);
		busy = false;
	}

	// Take complete frames out of buf, one block at a time.
	async function pump() {
		while (!busy) {
			const nl = buf.indexOf(10);
			if (nl < 0) {
				if (buf.length >= 32)
					bad('bad frame header on fd 4');
				if (ended) {
					if (buf.length)
						bad('fd 4 closed inside a frame header');
					process.exit(0);
				}
				return;
			}
			const m = /^R (0|[1-9][0-9]{0,9})$/.exec(buf.subarray(0, nl).toString('latin1'));
			if (!m || nl >= 32)
				bad('bad frame header on fd 4');
			const len = Number(m[1]);
			if (len > LIMIT)
				bad('code block too large');
			if (buf.length < nl + 1 + len) {
				if (ended)
					bad('fd 4 closed inside a code block');
				return;
			}
			const code = buf.subarray(nl + 1, nl + 1 + len).toString('utf8');
			buf = buf.subarray(nl + 1 + len);
			await run(code);
		}
	}

	const ctl = new net.Socket({ fd: CTL, readable: true, writable: false, allowHalfOpen: true });
	ctl.on('data', (chunk) => {
		buf = Buffer.concat([buf, chunk]);
		pump();
	});
	ctl.on('end', () => { ended = true; pump(); });
	ctl.on('error', () => { ended = true; pump(); });
})();
