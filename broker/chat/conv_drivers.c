/* The interpreters of an exported script (conv_script.c): for each
 * language a session runs, the command that starts it and a small driver
 * that keeps it alive across the script, as the session's jail kept it.
 *
 * The script hands each driver its blocks on fd 9 (a FIFO; stdin is
 * /dev/null, as in a jail), each block ended by a line equal to argv[1]
 * (a line no block has).  The driver runs the block in its interpreter's
 * top level, the way the session's driver did (drivers/): the names a
 * block defines persist; a final expression is shown (Python, JavaScript,
 * Ruby, R); exit() ends only the block (Python, Perl, Ruby), while the
 * shell's `exit` ends the interpreter, as it ended the session's jail.
 * It then flushes its output and writes "LANG STATUS" to the FIFO named by
 * argv[2], which the script waits on before the next block.  EOF on fd 9:
 * the driver exits 0.  Images are not shown: matplotlib draws with Agg,
 * display() prints only what has no image form.
 *
 * These are the drivers' ideas, not their text: the session's drivers also
 * speak warden's control protocol (running line, images, interrupts),
 * which a script has no use for. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "conv.h"
#include "warden/util.h"

static const char drv_python[] =
	"import sys\n"
	"def _warden_main():\n"
	"    import ast, builtins, inspect, linecache, os, traceback\n"
	"    end, done = sys.argv[1] + \"\\n\", sys.argv[2]\n"
	"    sys.argv = [\"\"]\n"
	"    os.environ.setdefault(\"MPLBACKEND\", \"Agg\")\n"
	"    os.set_inheritable(9, False)\n"
	"    blocks = os.fdopen(9, \"r\", encoding=\"utf-8\", errors=\"replace\", newline=\"\\n\")\n"
	"    pid = os.getpid()\n"
	"    g = sys.modules[\"__main__\"].__dict__\n"
	"    globals().pop(\"_warden_main\", None)\n"
	"    def display(*objs, **kw):\n"
	"        for o in objs:\n"
	"            if not (hasattr(o, \"_repr_png_\") or hasattr(o, \"_repr_jpeg_\")):\n"
	"                print(repr(o))\n"
	"    builtins.display = display\n"
	"    flags, loop, n = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, None, 0\n"
	"    while True:\n"
	"        lines = []\n"
	"        for line in blocks:\n"
	"            if line == end:\n"
	"                break\n"
	"            lines.append(line)\n"
	"        else:\n"
	"            return\n"
	"        n += 1\n"
	"        name, src, status = \"<block %d>\" % n, \"\".join(lines), 0\n"
	"        linecache.cache[name] = (len(src), None, lines, name)\n"
	"        try:\n"
	"            tree = compile(src, name, \"exec\", ast.PyCF_ONLY_AST | flags)\n"
	"            last = None\n"
	"            if tree.body and isinstance(tree.body[-1], ast.Expr):\n"
	"                last = ast.Interactive(body=[tree.body.pop()])\n"
	"            codes = [compile(tree, name, \"exec\", flags)]\n"
	"            if last is not None:\n"
	"                codes.append(compile(last, name, \"single\", flags))\n"
	"        except (SyntaxError, ValueError, OverflowError, MemoryError) as e:\n"
	"            traceback.print_exception(type(e), e, None)\n"
	"            codes, status = [], 1\n"
	"        try:\n"
	"            for c in codes:\n"
	"                if c.co_flags & inspect.CO_COROUTINE:\n"
	"                    if loop is None:\n"
	"                        import asyncio\n"
	"                        loop = asyncio.new_event_loop()\n"
	"                    loop.run_until_complete(eval(c, g))\n"
	"                else:\n"
	"                    exec(c, g)\n"
	"        except SystemExit as e:\n"
	"            if e.code is None:\n"
	"                status = 0\n"
	"            elif isinstance(e.code, int):\n"
	"                status = e.code & 0xff\n"
	"            else:\n"
	"                sys.stderr.write(\"%s\\n\" % (e.code,))\n"
	"                status = 1\n"
	"        except BaseException as e:\n"
	"            tb = e.__traceback__\n"
	"            while tb is not None and tb.tb_frame.f_code.co_filename != name:\n"
	"                tb = tb.tb_next\n"
	"            traceback.print_exception(type(e), e, tb or e.__traceback__)\n"
	"            status = 1\n"
	"        if os.getpid() != pid:\n"
	"            os._exit(status)\n"
	"        sys.stdout.flush()\n"
	"        sys.stderr.flush()\n"
	"        with open(done, \"w\") as f:\n"
	"            f.write(\"python %d\\n\" % status)\n"
	"_warden_main()\n";

static const char drv_javascript[] =
	"(function () {\n"
	"  \"use strict\";\n"
	"  const fs = require(\"fs\"), net = require(\"net\"), util = require(\"util\"),\n"
	"        vm = require(\"vm\");\n"
	"  const end = process.argv[1], done = process.argv[2];\n"
	"  process.argv.splice(1);\n"
	"  if (typeof globalThis.require !== \"function\")\n"
	"    globalThis.require = require;\n"
	"  function printError(e) {\n"
	"    const t = e instanceof Error && typeof e.stack === \"string\" ? e.stack\n"
	"              : \"Uncaught \" + util.inspect(e);\n"
	"    process.stderr.write(t + \"\\n\");\n"
	"  }\n"
	"  process.on(\"uncaughtException\", printError);\n"
	"  process.on(\"unhandledRejection\", printError);\n"
	"  const flushed = (s) => new Promise((r) => s.write(\"\", r));\n"
	"  async function run(code) {\n"
	"    let status = 0;\n"
	"    try {\n"
	"      let script;\n"
	"      try {\n"
	"        script = new vm.Script(code, { filename: \"block\" });\n"
	"      } catch (e) {\n"
	"        if (!(e instanceof SyntaxError) || !/await/.test(code))\n"
	"          throw e;\n"
	"        script = new vm.Script(\"(async () => {\\n\" + code + \"\\n})()\",\n"
	"                               { filename: \"block\", lineOffset: -1 });\n"
	"      }\n"
	"      let v = script.runInThisContext({ displayErrors: false });\n"
	"      if (v !== null && (typeof v === \"object\" || typeof v === \"function\") &&\n"
	"          typeof v.then === \"function\")\n"
	"        v = await v;\n"
	"      if (v !== undefined)\n"
	"        process.stdout.write(util.inspect(v) + \"\\n\");\n"
	"    } catch (e) {\n"
	"      status = 1;\n"
	"      printError(e);\n"
	"    }\n"
	"    await flushed(process.stdout);\n"
	"    await flushed(process.stderr);\n"
	"    fs.writeFileSync(done, \"javascript \" + status + \"\\n\");\n"
	"  }\n"
	"  let buf = \"\", lines = [], queue = Promise.resolve();\n"
	"  const blocks = new net.Socket({ fd: 9, readable: true, writable: false });\n"
	"  blocks.setEncoding(\"utf8\");\n"
	"  blocks.on(\"data\", (chunk) => {\n"
	"    buf += chunk;\n"
	"    for (let i; (i = buf.indexOf(\"\\n\")) >= 0;) {\n"
	"      const line = buf.slice(0, i);\n"
	"      buf = buf.slice(i + 1);\n"
	"      if (line !== end) {\n"
	"        lines.push(line);\n"
	"        continue;\n"
	"      }\n"
	"      const code = lines.join(\"\\n\") + \"\\n\";\n"
	"      lines = [];\n"
	"      queue = queue.then(() => run(code));\n"
	"    }\n"
	"  });\n"
	"  blocks.on(\"end\", () => queue.then(() => process.exit(0)));\n"
	"})();\n";

/* bash: the block is eval'd in this very shell, as drivers/shell.sh does */
static const char drv_shell[] =
	"__warden_end=$1 __warden_done=$2\n"
	"set --\n"
	"while :; do\n"
	"\t__warden_code= __warden_more=\n"
	"\twhile IFS= read -r __warden_line <&9; do\n"
	"\t\tif [ \"$__warden_line\" = \"$__warden_end\" ]; then __warden_more=1; break; fi\n"
	"\t\t__warden_code=$__warden_code$__warden_line$'\\n'\n"
	"\tdone\n"
	"\t[ -n \"$__warden_more\" ] || exit 0\n"
	"\teval \"$__warden_code\" 9<&-\n"
	"\tprintf 'shell %d\\n' \"$?\" > \"$__warden_done\"\n"
	"done\n";

static const char drv_perl[] =
	"sub WardenDriver::run_block { eval \"package main;\\n#line 1 \\\"block\\\"\\n$_[0]\\n\"; return }\n"
	"package WardenDriver;\n"
	"use strict;\n"
	"use warnings;\n"
	"use Fcntl qw(F_SETFD FD_CLOEXEC);\n"
	"use IO::Handle;\n"
	"my ($end, $done) = @ARGV;\n"
	"@ARGV = ();\n"
	"open(my $blocks, \"<&=\", 9) or die \"fd 9: $!\";\n"
	"fcntl($blocks, F_SETFD, FD_CLOEXEC);\n"
	"STDOUT->autoflush(1);\n"
	"STDERR->autoflush(1);\n"
	"my $driver_pid = $$;\n"
	"BEGIN {\n"
	"\t*CORE::GLOBAL::exit = sub {\n"
	"\t\tCORE::exit(@_ ? $_[0] : 0) if $$ != $driver_pid;\n"
	"\t\tdie bless { status => (@_ ? $_[0] : 0) }, \"WardenDriver::Exit\";\n"
	"\t};\n"
	"}\n"
	"for (;;) {\n"
	"\tmy ($code, $more) = (\"\", 0);\n"
	"\twhile (defined(my $l = <$blocks>)) {\n"
	"\t\tif ($l eq \"$end\\n\") { $more = 1; last }\n"
	"\t\t$code .= $l;\n"
	"\t}\n"
	"\tlast unless $more;\n"
	"\tmy $status = 0;\n"
	"\t{\n"
	"\t\tlocal $@;\n"
	"\t\trun_block($code);\n"
	"\t\tif (ref($@) eq \"WardenDriver::Exit\") {\n"
	"\t\t\t$status = $@->{status};\n"
	"\t\t\t$status = 1 unless defined $status && $status =~ /\\A-?[0-9]+\\z/;\n"
	"\t\t\t$status &= 0xff;\n"
	"\t\t} elsif (ref($@) || length($@)) {\n"
	"\t\t\tmy $e = length($@) ? $@ : \"Died\";\n"
	"\t\t\tprint STDERR $e, ($e =~ /\\n\\z/ ? \"\" : \"\\n\");\n"
	"\t\t\t$status = 1;\n"
	"\t\t}\n"
	"\t}\n"
	"\tCORE::exit($status) if $$ != $driver_pid;\n"
	"\topen(my $d, \">\", $done) or CORE::exit(3);\n"
	"\tprint $d \"perl $status\\n\";\n"
	"\tclose($d);\n"
	"}\n"
	"CORE::exit(0);\n";

static const char drv_ruby[] =
	"lambda do\n"
	"  end_line, done = \"#{ARGV[0]}\\n\", ARGV[1]\n"
	"  ARGV.clear\n"
	"  blocks = IO.for_fd(9, \"r\", autoclose: false)\n"
	"  blocks.close_on_exec = true\n"
	"  $stdout.sync = true\n"
	"  $stderr.sync = true\n"
	"  pid = Process.pid\n"
	"  report = lambda do |e|\n"
	"    bt = (e.backtrace || []).take_while { |l| !l.start_with?(\"-e:\") }\n"
	"    if bt.empty?\n"
	"      text = \"#{e.class}: #{e.message}\"\n"
	"    else\n"
	"      e.set_backtrace(bt)\n"
	"      text = e.full_message(highlight: false, order: :top)\n"
	"    end\n"
	"    $stderr.write(text.end_with?(\"\\n\") ? text : \"#{text}\\n\")\n"
	"  end\n"
	"  shown = lambda do |code|\n"
	"    require \"ripper\"\n"
	"    tree = Ripper.sexp(code)\n"
	"    stmts = tree && tree[1]\n"
	"    last = stmts.is_a?(Array) ? stmts.last : nil\n"
	"    last.is_a?(Array) &&\n"
	"      !%i[assign opassign massign def defs class module void_stmt alias undef].include?(last[0])\n"
	"  rescue StandardError\n"
	"    false\n"
	"  end\n"
	"  loop do\n"
	"    code, more = +\"\", false\n"
	"    while (l = blocks.gets)\n"
	"      if l == end_line\n"
	"        more = true\n"
	"        break\n"
	"      end\n"
	"      code << l\n"
	"    end\n"
	"    exit!(0) unless more\n"
	"    code.force_encoding(Encoding::UTF_8)\n"
	"    status =\n"
	"      begin\n"
	"        value = eval(code, TOPLEVEL_BINDING, \"block\", 1)\n"
	"        $stdout.write(\"#{value.inspect}\\n\") if !value.nil? && shown.call(code)\n"
	"        0\n"
	"      rescue SystemExit => e\n"
	"        e.status & 0xff\n"
	"      rescue Exception => e\n"
	"        report.call(e)\n"
	"        1\n"
	"      end\n"
	"    $stdout.flush rescue nil\n"
	"    $stderr.flush rescue nil\n"
	"    exit!(status) if Process.pid != pid\n"
	"    File.write(done, \"ruby #{status}\\n\")\n"
	"  end\n"
	"end.call\n";

/* R reads its blocks on stdin (the script gives it fd 9 there), as the
 * session's driver reads its control socket */
static const char drv_r[] =
	"local({\n"
	"  args <- commandArgs(trailingOnly = TRUE)\n"
	"  end <- args[1]\n"
	"  done <- args[2]\n"
	"  blocks <- file(\"stdin\")\n"
	"  open(blocks)\n"
	"  repeat {\n"
	"    code <- character(0)\n"
	"    more <- FALSE\n"
	"    repeat {\n"
	"      l <- readLines(blocks, n = 1L, warn = FALSE)\n"
	"      if (length(l) == 0L) break\n"
	"      if (identical(l, end)) {\n"
	"        more <- TRUE\n"
	"        break\n"
	"      }\n"
	"      code <- c(code, l)\n"
	"    }\n"
	"    if (!more) quit(save = \"no\", status = 0, runLast = FALSE)\n"
	"    status <- tryCatch({\n"
	"      for (e in parse(text = code, keep.source = FALSE, srcfile = NULL)) {\n"
	"        r <- withVisible(eval(e, envir = globalenv()))\n"
	"        if (r$visible) print(r$value)\n"
	"      }\n"
	"      0L\n"
	"    }, error = function(c) {\n"
	"      call <- conditionCall(c)\n"
	"      where <- if (is.null(call)) \"\" else paste0(\" in \", deparse(call, nlines = 1L))\n"
	"      writeLines(paste0(\"Error\", where, \": \", conditionMessage(c)), con = stderr())\n"
	"      1L\n"
	"    })\n"
	"    try(flush(stdout()), silent = TRUE)\n"
	"    try(flush(stderr()), silent = TRUE)\n"
	"    con <- file(done, open = \"w\", raw = TRUE)\n"
	"    writeLines(paste(\"r\", status), con)\n"
	"    close(con)\n"
	"  }\n"
	"})\n";

/* The session's names and aliases (supervisor/lang.c's wlangs: the unit
 * test test_conv_script checks that both agree), and what starts each.
 * "$warden_drv" is the driver's text, "$warden_end" the end line,
 * "$warden_dir/done" where it says a block ended. */
static const struct conv_interp interps[] = {
	{ "python", ",python,py,python3,", "python3",
	  "python3 -u -c \"$warden_drv_python\" \"$warden_end\" \"$warden_dir/done\"", drv_python, 3 },
	{ "javascript", ",javascript,js,node,nodejs,", "node",
	  "node -e \"$warden_drv_javascript\" \"$warden_end\" \"$warden_dir/done\"",
	  drv_javascript, 4 },
	{ "shell", ",shell,bash,sh,", "bash",
	  "bash --noprofile --norc -c \"$warden_drv_shell\" bash \"$warden_end\" "
	  "\"$warden_dir/done\"", drv_shell, 5 },
	{ "perl", ",perl,pl,", "perl",
	  "perl -e \"$warden_drv_perl\" \"$warden_end\" \"$warden_dir/done\"", drv_perl, 6 },
	{ "ruby", ",ruby,rb,", "ruby",
	  "ruby -e \"$warden_drv_ruby\" \"$warden_end\" \"$warden_dir/done\"", drv_ruby, 7 },
	{ "r", ",r,rscript,", "Rscript",
	  "Rscript --vanilla -e \"$warden_drv_r\" \"$warden_end\" \"$warden_dir/done\" <&9",
	  drv_r, 8 },
};

const struct conv_interp *conv_interp_find(const char *lang)
{
	char key[72];

	if (!lang || !*lang || strlen(lang) > 64)
		return NULL;
	snprintf(key, sizeof(key), ",%s,", lang);
	for (char *p = key; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	for (size_t i = 0; i < ARRAY_SIZE(interps); i++)
		if (strstr(interps[i].names, key))
			return &interps[i];
	return NULL;
}

const struct conv_interp *conv_interp_all(size_t *n)
{
	*n = ARRAY_SIZE(interps);
	return interps;
}
