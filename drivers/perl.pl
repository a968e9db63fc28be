# warden's persistent Perl driver (supervisor/lang.h has the protocol).
# Run as `perl -e <this text>` inside the jail.  Reads "R <len>\n" + <len>
# bytes of code from fd 4, evals the block as a string in package main,
# flushes STDOUT/STDERR and writes "D <status>\n" on fd 4.  EOF: exit 0.
# Package variables (our $x, or $x without strict), subs and use'd modules
# persist; lexicals (my $x) end with their block, as any eval's do.

# First, before any lexical exists, so that a block sees none of the
# driver's variables: each block is compiled in package main, without
# strict, with its lines named "block line N" in messages.
sub WardenDriver::run_block { eval "package main;\n#line 1 \"block\"\n$_[0]\n"; return }

package WardenDriver;
use strict;
use warnings;
use Fcntl qw(F_GETFD F_SETFD FD_CLOEXEC);
use IO::Handle;

my $CTL;
open($CTL, '+<&=', 4) or bad("fd 4: $!");
fcntl($CTL, F_SETFD, fcntl($CTL, F_GETFD, 0) | FD_CLOEXEC);  # not for children
binmode($CTL);
binmode(STDOUT);
binmode(STDERR);
STDOUT->autoflush(1);
STDERR->autoflush(1);

my $driver_pid = $$;
my $running = 0;

sub bad {
	print STDERR "warden perl driver: $_[0]\n";
	CORE::exit(2);
}

# exit(n) in a block ends the block with status n, not the session (but a
# forked child really exits).
BEGIN {
	*CORE::GLOBAL::exit = sub {
		CORE::exit(@_ ? $_[0] : 0) if $$ != $driver_pid;
		die bless { status => (@_ ? $_[0] : 0) }, 'WardenDriver::Exit';
	};
}

# pid 1 of a pid namespace ignores signals it has no handler for.  SIGINT
# stops a running block (between two Perl ops, or a sleep/read); between
# blocks it is dropped.
$SIG{INT} = sub { die bless {}, 'WardenDriver::Interrupt' if $running; };

my $buf = '';
# Reads more bytes from fd 4 into $buf; 0 at EOF.
sub fill {
	for (;;) {
		my $n = sysread($CTL, $buf, 65536, length $buf);
		return $n if defined $n;
		next if $!{EINTR};
		bad("reading fd 4: $!");
	}
}

# The next block's code, or undef on a clean EOF.
sub read_frame {
	my $nl;
	while (($nl = index($buf, "\n")) < 0) {
		bad('bad frame header on fd 4') if length($buf) >= 32;
		next if fill();
		bad('fd 4 closed inside a frame header') if length $buf;
		return undef;
	}
	my $hdr = substr($buf, 0, $nl + 1, '');
	$hdr =~ /\AR (0|[1-9][0-9]{0,9})\n\z/ or bad('bad frame header on fd 4');
	my $len = $1;
	bad('code block too large') if $len > (1 << 30);
	while (length($buf) < $len) {
		fill() or bad('fd 4 closed inside a code block');
	}
	return substr($buf, 0, $len, '');
}

sub run {
	my ($code) = @_;
	my $status = 0;
	local $@;
	$running = 1;
	run_block($code);
	$running = 0;
	if (ref($@) || length($@)) {
		my $e = $@;
		if (ref($e) eq 'WardenDriver::Exit') {
			$status = $e->{status};
			$status = 1 unless defined $status && $status =~ /\A-?[0-9]+\z/;
			$status &= 0xff;
		} elsif (ref($e) eq 'WardenDriver::Interrupt') {
			print STDERR "Interrupted (SIGINT)\n";
			$status = 130;
		} else {
			$e = "Died" unless defined $e && length $e;
			print STDERR $e, ($e =~ /\n\z/ ? '' : "\n");
			$status = 1;
		}
	}
	return $status;
}

while (defined(my $code = read_frame())) {
	my $status = eval { run($code) };
	$status = 130 unless defined $status;   # SIGINT right after the block
	$running = 0;
	CORE::exit($status) if $$ != $driver_pid;   # a child forked by the block
	eval { STDOUT->flush if defined fileno(STDOUT) };
	eval { STDERR->flush if defined fileno(STDERR) };
	my $msg = "D $status\n";
	while (length $msg) {
		my $n = syswrite($CTL, $msg);
		if (!defined $n) {
			next if $!{EINTR};
			CORE::exit(3);   # the supervisor is gone
		}
		substr($msg, 0, $n, '');
	}
}
CORE::exit(0);
