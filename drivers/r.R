# warden's persistent R driver (supervisor/lang.h has the protocol).
# Run as `Rscript --vanilla -e <this text>` inside the jail.  Tested with
# Debian 12's r-base-core (tests/cli/drivers.bats, tests/cli/stacks.bats).
#
# Reads "R <len>" + newline + <len> bytes of UTF-8 code, evaluates each
# top-level expression of the block in the global environment (printing
# visible values, as the R console does), flushes and writes "D <status>" +
# newline.  EOF: exit 0.  R cannot use a socket it inherited on fd 4, and
# between blocks the session kills every process of the jail but the
# driver (SECURITY.md, G36), so no helper process can carry the bytes for
# it: supervisor/lang.c starts R through sh with the control socket as its
# stdin (fd 4 closed), R reads frames with file("stdin"), and each "D" is
# written by one short-lived sh (echo >&0) that ignores SIGINT and is
# started again if an interrupt killed it before it wrote.  So programs a block
# starts get the control socket as their stdin (supervisor/lang.c).
#
# R's front-end script passes -e through `echo` and unquoted expansion, and
# R takes at most 10000 bytes of -e text: this file must contain no
# backslash, no glob character (asterisk, question mark, bracket) and no
# tab (R 4.2's script encodes only spaces and newlines, so a tab splits the
# text into ignored arguments), and stay small (the unit test checks).  The
# -e text needs a writable TMPDIR (R writes it to a temporary file).
# Everything is inside local() so that the global environment holds only
# the user's names.
#
# Interrupts are held back while the driver waits for a frame and allowed
# only while a block runs; one that came between blocks is spent before the
# next block starts, so it does not interrupt that block.
local({
  rd <- file("stdin", open = "rb")
  nl <- as.raw(10)
  options(warn = 1)

  bad <- function(msg) {
    writeLines(paste0("warden R driver: ", msg), con = stderr())
    quit(save = "no", status = 2, runLast = FALSE)
  }

  # exactly n bytes of the control socket (fewer only at EOF)
  read_bytes <- function(n) {
    out <- raw(0)
    while (length(out) < n) {
      got <- readBin(rd, "raw", n - length(out))
      if (length(got) == 0)
        break
      out <- c(out, got)
    }
    out
  }

  # "R <len>" with 0 < len < 1e9, no leading zero; the length or -1
  frame_len <- function(h) {
    if (!startsWith(h, "R ") || nchar(h) < 3 || nchar(h) > 11)
      return(-1)
    num <- substring(h, 3)
    d <- utf8ToInt(num)
    if (!all(d >= 48 & d <= 57) || (nchar(num) > 1 && startsWith(num, "0")))
      return(-1)
    as.numeric(num)
  }

  # the next block's code, or NULL on a clean EOF
  read_frame <- function() {
    hdr <- raw(0)
    repeat {
      b <- readBin(rd, "raw", 1)
      if (length(b) == 0) {
        if (length(hdr))
          bad("fd 4 closed inside a frame header")
        return(NULL)
      }
      if (b == nl)
        break
      hdr <- c(hdr, b)
      if (length(hdr) >= 32)
        bad("bad frame header on fd 4")
    }
    len <- frame_len(rawToChar(hdr))
    if (len < 0)
      bad("bad frame header on fd 4")
    code <- read_bytes(len)
    if (length(code) != len)
      bad("fd 4 closed inside a code block")
    if (len == 0)
      return("")
    s <- rawToChar(code)
    Encoding(s) <- "UTF-8"
    s
  }

  run <- function(code) {
    tryCatch(allowInterrupts(Sys.sleep(0)), interrupt = function(c) NULL)
    tryCatch(allowInterrupts({
      exprs <- parse(text = code, keep.source = FALSE, srcfile = NULL)
      for (e in exprs) {
        r <- withVisible(eval(e, envir = globalenv()))
        if (r$visible)
          print(r$value)
      }
      0L
    }), interrupt = function(c) {
      writeLines("Interrupted (SIGINT)", con = stderr())
      130L
    }, error = function(c) {
      call <- conditionCall(c)
      where <- if (is.null(call)) "" else paste0(" in ", deparse(call, nlines = 1L))
      writeLines(paste0("Error", where, ": ", conditionMessage(c)), con = stderr())
      1L
    })
  }

  suspendInterrupts(repeat {
    code <- read_frame()
    if (is.null(code))
      quit(save = "no", status = 0, runLast = FALSE)
    status <- run(code)
    try(flush(stdout()), silent = TRUE)
    try(flush(stderr()), silent = TRUE)
    # system() gives a killed child's signal.  2: a SIGINT came before
    # the trap, nothing was written, write again.  9: the sweep that
    # follows a block killed it after it wrote (G36).
    repeat {
      if (system(paste0("trap '' INT; echo D ", status, " >&0")) != 2)
        break
    }
  })
})
