import TetherCore

/// The client's one timer, kept at the machine's next wake time (`SessionMachine.nextWake`): it is armed only when
/// that changes, and made on first use.
struct MachineTimer {
    private var timer: (any ClientTimer)?
    /// The wake time the timer is armed for; nil when it is not armed.
    private var wake: Int?

    var isArmed: Bool { self.timer?.isArmed == true }

    /// Arms the timer for `wake` (nil: disarms it), making it with `make` the first time.
    mutating func move(to wake: Int?, make: () -> any ClientTimer) {
        guard wake != self.wake else { return }
        self.wake = wake
        guard let wake else {
            self.timer?.cancel()
            return
        }
        // Not `self.timer == nil`: that compares a copy of the existential, at every arming.
        guard self.timer?.arm(atMilliseconds: wake) != nil else {
            var timer = make()
            timer.arm(atMilliseconds: wake)
            self.timer = timer
            return
        }
    }

    /// The armed wake time has come: returns it and disarms, or nil when the timer was disarmed while its firing was
    /// on the way (an arming replaced or cancelled before never fires: `WakeTimer`).
    mutating func fired() -> Int? {
        guard let wake = self.wake else { return nil }
        self.timer?.fired()
        self.wake = nil
        return wake
    }

    mutating func cancel() {
        self.timer?.cancel()
    }
}
