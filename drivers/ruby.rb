# warden's persistent Ruby driver (supervisor/lang.h has the protocol).
# Run as `ruby -e <this text>` inside the jail.  Reads "R <len>\n" + <len>
# bytes of UTF-8 code from fd 4, evals the block in TOPLEVEL_BINDING (local
# variables, methods, classes and requires persist), flushes $stdout and
# $stderr and writes "D <status>\n" on fd 4.  EOF: exit 0.  The value of a
# final expression is shown (inspect), as irb does, unless the last
# statement is an assignment or a definition or the value is nil.  The driver runs
# inside a lambda so that its locals are not in the top-level binding.
lambda do
  ctl = IO.for_fd(4, 'r+b', autoclose: false)
  ctl.close_on_exec = true              # not for child processes
  ctl.sync = true
  $stdout.sync = true
  $stderr.sync = true
  running = false
  pid = Process.pid

  bad = lambda do |msg|
    STDERR.write("warden ruby driver: #{msg}\n")
    exit!(2)
  end

  # pid 1 of a pid namespace ignores signals it has no handler for.  SIGINT
  # raises Interrupt in a running block; between blocks it is dropped.
  trap('INT') { raise Interrupt if running }

  # Flush a stream that the block may have replaced; one that it closed is
  # opened again on its fd (closing $stdout leaves fd 1 open).
  flush = lambda do |name, fd|
    io = name == :out ? $stdout : $stderr
    if io.respond_to?(:closed?) && io.closed?
      io = IO.for_fd(fd, 'w', autoclose: false)
      io.sync = true
      name == :out ? $stdout = io : $stderr = io
    end
    io.flush
  rescue StandardError
    nil
  end

  # The next block's code, or nil on a clean EOF.
  read_frame = lambda do
    hdr = ctl.gets("\n", 32)
    return nil if hdr.nil?
    bad.call('fd 4 closed inside a frame header') unless hdr.end_with?("\n") || hdr.bytesize >= 32
    m = /\AR (0|[1-9][0-9]{0,9})\n\z/n.match(hdr)
    bad.call('bad frame header on fd 4') unless m
    len = m[1].to_i
    bad.call('code block too large') if len > (1 << 30)
    code = len.zero? ? +'' : ctl.read(len)
    bad.call('fd 4 closed inside a code block') if code.nil? || code.bytesize != len
    code.force_encoding(Encoding::UTF_8)
  end

  # The error as Ruby prints it, without the driver's frames (its own lines
  # are "-e:N"; the block's are "block:N").
  report = lambda do |e|
    bt = (e.backtrace || []).take_while { |l| !l.start_with?('-e:') }
    if bt.empty?                        # a SyntaxError, or raised by eval
      text = "#{e.class}: #{e.message}"
    else
      e.set_backtrace(bt)
      text = e.full_message(highlight: false, order: :top)
    end
    $stderr.write(text.end_with?("\n") ? text : "#{text}\n")
  rescue StandardError
    STDERR.write("#{e.class}: #{e.message}\n") rescue nil
  end

  # the value of the block's last statement is worth showing
  shown = lambda do |code|
    require 'ripper'
    tree = Ripper.sexp(code)
    stmts = tree && tree[1]
    last = stmts.is_a?(Array) ? stmts.last : nil
    last.is_a?(Array) &&
      !%i[assign opassign massign def defs class module void_stmt alias undef].include?(last[0])
  rescue StandardError
    false
  end

  loop do
    code = read_frame.call
    exit!(0) if code.nil?
    status =
      begin
        running = true
        value = eval(code, TOPLEVEL_BINDING, 'block', 1)
        running = false
        $stdout.write("#{value.inspect}\n") if !value.nil? && shown.call(code)
        0
      rescue SystemExit => e
        running = false
        e.status & 0xff
      rescue Interrupt
        running = false
        STDERR.write("Interrupt\n") rescue nil
        130
      rescue Exception => e # rubocop:disable Lint/RescueException
        running = false
        report.call(e)
        1
      ensure
        running = false
      end
    flush.call(:out, 1)
    flush.call(:err, 2)
    exit!(status) if Process.pid != pid  # a child forked by the block
    begin
      ctl.write("D #{status}\n")
    rescue StandardError
      exit!(3)                           # the supervisor is gone
    end
  end
end.call
