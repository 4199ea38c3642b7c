package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/mqtt"
	"github.com/edgeagent/edgeagent/mqtt/brokercheck"
)

// doctor checks the world around the agent; today its broker.
func init() {
	var (
		o       brokercheck.Options
		tlsF    mqtt.TLS
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "doctor --broker URL",
		Short: "Check an MQTT broker the way the agent uses it: drops under a burst, its queue, the settings it needs",
		Long: `doctor sends a short burst of QoS 1 messages through the broker to itself, on a topic of its own
(edgeagent-doctor/…), with a subscriber that holds its acknowledgements as the agent holds a
command's until it has run. It reports what the broker acknowledged and then dropped, how many it
let through before any acknowledgement (its in-flight window) and a round trip, and prints the
mosquitto settings a robot's broker needs. It exits 1 when the broker dropped anything.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.URL == "" {
				return errors.New("--broker is required, e.g. --broker tcp://127.0.0.1:1883")
			}
			if strings.HasPrefix(o.URL, "ssl://") {
				tc, err := mqtt.TLSConfig(tlsF)
				if err != nil {
					return err
				}
				o.TLS = tc
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			rep, err := brokercheck.Run(ctx, o)
			if err != nil {
				return err
			}
			printProbe(cmd.OutOrStdout(), o.URL, rep)
			if rep.Dropped > 0 {
				return fmt.Errorf("the broker dropped %d of %d messages it had acknowledged", rep.Dropped, rep.Sent)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.URL, "broker", "", "broker URL, e.g. tcp://127.0.0.1:1883 or ssl://broker.lan:8883")
	f.StringVar(&o.Username, "username", "", "broker user")
	f.StringVar(&o.Password, "password", "", "broker password")
	f.StringVar(&tlsF.CA, "ca", "", "CA certificate (PEM) for ssl:// brokers")
	f.StringVar(&tlsF.Cert, "cert", "", "client certificate (PEM)")
	f.StringVar(&tlsF.Key, "key", "", "client key (PEM)")
	f.IntVar(&o.Burst, "burst", 3000, "QoS 1 messages in the burst")
	f.DurationVar(&timeout, "timeout", time.Minute, "give up after")
	rootCmd.AddCommand(cmd)
}

func printProbe(w io.Writer, url string, r brokercheck.Report) {
	fmt.Fprintf(w, "broker %s\n", url)
	fmt.Fprintf(w, "  burst: %d QoS 1 messages acknowledged to the publisher, %d delivered, %d dropped, %d delivered twice\n",
		r.Sent, r.Received, r.Dropped, r.Duplicates)
	fmt.Fprintf(w, "  in flight: %d delivered before the subscriber acknowledged any; %d queued after them\n",
		r.InFlight, max(0, r.Received-r.InFlight))
	fmt.Fprintf(w, "  round trip: %v (median of single messages)\n", r.RoundTrip.Round(10*time.Microsecond))
	if r.Dropped > 0 {
		fmt.Fprintf(w, "DROPS: the broker acknowledged %d messages and never delivered them: a robot loses commands like these, silently.\n", r.Dropped)
	} else {
		fmt.Fprintln(w, "no drops")
	}
	fmt.Fprintln(w, "\nmosquitto.conf settings a robot's broker needs:")
	for _, s := range brokercheck.Settings {
		fmt.Fprintf(w, "  %-28s # %s\n", s.Line, s.Why)
	}
}
