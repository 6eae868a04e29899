/// Placeholder until the command lands: `tether check`, `tether connect URL`, `tether serve`.
public enum TetherCommand {
    public static func main(_ arguments: [String]) async -> Int32 {
        print("usage: tether check|connect|serve")
        return 2
    }
}
