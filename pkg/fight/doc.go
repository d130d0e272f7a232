// Package fight detects ownership fights: two or more managers taking a
// field from each other, each writing its own value, again and again.
//
// A Tracker is fed every version of the watched objects (Observe) and
// keeps, per object and path, who owns the path and its value. A change of
// both owner and value is a flip; a path is fought over when it flips at
// least MinFlips times within Window and ownership returns to a manager
// that had lost it. A single handover (one flip, or a chain that never
// comes back), a controller's steady writes (the owner does not change)
// and a rollout (the applier changes values it already owns) are not
// fights. It is pure: the caller supplies the time and does the watching.
//
// Moves reads the same flips from managedFields alone, between two
// versions of an object (a field that changed hands changed value: the
// field manager moves it only then), and Tracker.Moved takes them: no
// value is read, and nothing is kept of an object until a field of it
// moves (kubectl ssa monitor, over metadata informers).
package fight
