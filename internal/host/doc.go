// Package host reads facts about the machine perfgate runs on: the runner's
// CPU model (retries are classified by it), which attempt of the gate this
// is, and, for the action, the container perfgate itself runs in, so it can
// run again beside it on the host's network. It also picks free loopback
// ports (FreePorts), for the arms and the store alike, below the kernel's
// ephemeral range so no outgoing connection takes one before it is bound.
//
// It only reads the machine and picks ports; it starts nothing of the
// gate's own (internal/arms starts the arms, internal/armdb the store).
package host
