package experiment

// KneeClimb is the knee's own factor, for the external tests' rerun rule:
// a pool stalled past it where nothing queues hides the knee it reads.
const KneeClimb = kneeClimb
