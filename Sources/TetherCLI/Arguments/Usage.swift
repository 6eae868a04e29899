/// The usage texts printed with `--help` and after a bad argument.
enum Usage {
    static let main = """
        usage: tether <command> [options]

        commands:
          check     run the acceptance matrix against an embedded test server and write a report
          connect   an interactive WebSocket client (stdin lines are sent, messages are printed)
          serve     run the controllable test server in the foreground

        'tether help <command>' or 'tether <command> --help' shows a command's options;
        'tether --version' the version.
        """

    static let check = """
        usage: tether check [--out DIR] [--only NAME] [--skip NAME]... [--json]

          --out DIR     write tether-report.json and tether-report.html to DIR (default: .)
          --only NAME   run one scenario; names: \(CheckCatalog.names.joined(separator: ", "))
          --skip NAME   leave a scenario out (repeatable)
          --json        print a machine-readable summary on stdout instead of the table

        exit status: 0 all scenarios passed, 1 a scenario failed, 2 bad arguments
        """

    static let connect = """
        usage: tether connect URL [options]

          --header K:V          extra handshake header (repeatable; values are never logged)
          --protocol P          offer subprotocol P (repeatable)
          --interval MS         heartbeat interval (default 15000)
          --timeout MS          pong timeout (default 5000)
          --connect-timeout MS  time a connection attempt may take, handshake included (default 10000)
          --backoff-base MS     first retry delay (default 1000)
          --backoff-cap MS      largest retry delay (default 60000)
          --max-message BYTES   largest message accepted (default 16777216)
          --count N             exit after N received messages (the end of stdin then does not end it)
          --duration MS         exit after MS milliseconds (the end of stdin then does not end it)
          --quiet               do not print message bodies
          --raw                 print text messages as received, control characters included
          --events jsonl        print every event record as one JSON object per line on stdout
          --events-text         with --events jsonl: add each message's text (or base64) to its record
          --no-path-monitor     do not watch the network path (default: the platform monitor)
          --interface-switch make-before-break|probe
                                when the path moves to other interfaces while open: open the next connection
                                first, or probe the open one (default: probe)
          --no-stdin            do not read stdin; run until --count, --duration or a signal
          --ca-file F           for wss://, also trust the CA certificates in PEM file F (repeatable)
          --pin sha256/BASE64   for wss://, require this SPKI SHA-256 pin in the chain (repeatable)
          --insecure            for wss://, skip certificate verification (local testing only)
          --deflate             offer permessage-deflate (compress messages of 128 bytes or more)
          --deflate-window BITS with --deflate implied: limit both windows to 2^BITS bytes (9...15)
          --deflate-no-context-takeover
                                with --deflate implied: both sides reset their context per message
          --cert F --key F      for wss://, present the PEM client certificate chain F and its PEM private
                                key F to a server that asks for one (mutual TLS)
          --key-passphrase-env VAR
                                decrypt an encrypted --key with the passphrase in environment variable VAR
                                (never on the command line, where ps and shell histories show it)
          --queue               queue stdin lines in the client's outbox (kept across reconnects, sent in
                                order after the greeting); a line that finds the outbox full is reported
          --greeting-file PATH  send each line of PATH as a text message first on every open
          --acknowledged        send stdin lines as acknowledged sends in the test server's delivery protocol
                                ('send ID LINE'): kept until the server answers 'ack ID', written again after a
                                reconnect; each acknowledgement is reported (the protocol of 'tether serve')
          --feed STREAM         follow STREAM of the test server's delivery protocol (repeatable): subscribe,
                                resume after the last number delivered on every open, print each number once,
                                report a gap
          --proxy URL           tunnel through the HTTP proxy http://[USER:PASSWORD@]HOST:PORT with CONNECT,
                                or the SOCKS5 proxy socks5h:// (it resolves names) or socks5:// (we do)
                                (the password is sent to the proxy only, never shown)
          --proxy-env           pick the proxy from https_proxy (wss), http_proxy (ws), all_proxy and
                                no_proxy, as curl does (without a proxy flag the connection is direct)

        stdin lines are sent as text messages, each once the previous one is sent (a line typed while
        the connection is not open waits for it). On a terminal the line being typed stays below the
        status line, and received messages are marked '< '. At the end of stdin (without --count or
        --duration) the command closes the connection and prints the replies that arrive before the
        server's close, then exits. Control characters in received text (U+0000-U+001F, U+007F-U+009F,
        tab and newline included) are printed as \\u{XX}, for example ESC as \\u{1B}; --raw prints them
        as they are. SIGINT or SIGTERM closes the connection and exits within a second, even when
        nobody reads stdout.
        A certificate that does not verify stops at once (tls_failed, exit status 3).
        exit status: 0 clean exit, 2 bad arguments, 3 stopped for a non-retryable reason,
        130 (143) SIGINT (SIGTERM) before any connection opened
        """

    static let serve = """
        usage: tether serve [options]

          --host ADDR            listen address (default 127.0.0.1)
          --port N               port (default 0: a free one, printed; give it again to keep it)
          --pong-delay MS        answer pings MS late
          --no-pong              never answer pings
          --close-after MS       send a close frame after MS (with --close-code N, default 1000,
                                 and --close-reason R)
          --reject STATUS        reject the handshake with this HTTP status [--retry-after S]
          --send N               send N messages [--every MS] [--size B]
          --echo                 echo data messages (the default)
          --no-echo              do not echo
          --deflate              accept a client's permessage-deflate offer
          --ping-every MS        send a ping every MS
          --broadcast-every MS   send every open connection the server's next number every MS (one feed for all)
          --delivery             speak the delivery protocol: answer 'send ID BODY' with 'ack ID' (each id taken
                                 once), publish streams to 'subscribe STREAM [AFTER]' as 'feed STREAM N'
          --feed NAME            a stream to publish (repeatable; default 'feed'); implies --delivery
          --feed-every MS        a number of each stream every MS (default 1000); implies --delivery
          --feed-retained N      numbers of each stream a resume can get again (default 1000); implies --delivery
          --handshake-timeout MS close a connection without a complete request after MS (default 10000)
          --max-handshaking N    at most N connections in the handshake; a new one resets the oldest
                                 (default 128)
          --record-limit N       records kept per list of a connection; counts stay exact (default 1000)
          --tls-cert F --tls-key F
                                 serve wss:// with the PEM certificate chain F and its PEM private key
          --require-client-cert F
                                 with --tls-cert: require a client certificate issued by a CA of PEM file F
                                 (mutual TLS); the subject of each one accepted is printed

        prints the URL, then one line per connection event (lines that find a full output queue are
        counted, not kept); stops on SIGINT or SIGTERM within a second, even when nobody reads stdout.
        """

    /// The usage of `command`, or the general one.
    static func text(for command: String?) -> String {
        switch command {
        case "check": self.check
        case "connect": self.connect
        case "serve": self.serve
        default: self.main
        }
    }

    /// The one line shown after `error`, pointing at the usage: the command's own when the command is known.
    static func hint(after error: ArgumentError, arguments: [String]) -> String {
        switch error {
        case .missingCommand, .unknownCommand: "Run 'tether help' for the commands."
        default: "Run 'tether help \(arguments.first ?? "")' for its options."
        }
    }
}
