#if os(Linux)
/// The links, addresses and default routes of one network namespace, built from rtnetlink messages, and the
/// path snapshot they imply. Pure: messages in, snapshot out.
///
/// The path is satisfied when an IPv4 or IPv6 default route of the main table goes through a link that is up,
/// running and not loopback, and that link has a usable address of the route's family (global or site scope,
/// not tentative). `interfaces` lists the kinds of the links carrying such routes, lowest metric first, and
/// `interfaceNames` their names in the same order; `isExpensive` is true when the first one is cellular;
/// `isConstrained` is always false and `requiresConnection` never happens (Linux has no kernel notion of either).
struct RouteNetlinkModel: Equatable, Sendable {
    private(set) var links: [Int32: LinkRecord] = [:]
    private(set) var addresses: [AddressRecord.Key: AddressRecord] = [:]
    private(set) var defaultRoutes: [RouteRecord] = []

    mutating func apply(_ event: RouteNetlinkEvent) {
        switch event {
        case .linkChanged(let link):
            self.links[link.index] = link
            // Taking a link down flushes its IPv4 routes without any RTM_DELROUTE (IPv6 announces its own).
            if !link.isAdministrativelyUp {
                self.flushIPv4Routes(through: link.index)
            }
        case .linkRemoved(let index):
            self.links[index] = nil
            self.addresses = self.addresses.filter { $0.key.linkIndex != index }
            self.defaultRoutes = self.defaultRoutes.compactMap { route in
                var route = route
                route.outputLinks.removeAll { $0 == index }
                return route.outputLinks.isEmpty ? nil : route
            }
        case .addressAdded(let address):
            self.addresses[address.key] = address
        case .addressRemoved(let address):
            self.addresses[address.key] = nil
            guard address.family == Netlink.Family.inet else { break }
            // The kernel silently drops IPv4 routes whose preferred source was this address, and all IPv4
            // routes through a link that has lost its last IPv4 address.
            let stillAssigned = self.addresses.values.contains {
                $0.family == address.family && $0.address == address.address
            }
            if !stillAssigned {
                self.defaultRoutes.removeAll { $0.family == address.family && $0.preferredSource == address.address }
            }
            self.flushIPv4Routes(through: address.linkIndex)
        case .routeAdded(let route, let replacing):
            guard route.isDefault else { break }
            if replacing {
                self.defaultRoutes.removeAll { $0.sharesSlot(with: route) }
            }
            if let existing = self.defaultRoutes.firstIndex(of: route) {
                self.defaultRoutes[existing] = route
            } else {
                self.defaultRoutes.append(route)
            }
        case .routeRemoved(let route):
            guard route.isDefault else { break }
            if let existing = self.defaultRoutes.firstIndex(of: route) {
                self.defaultRoutes.remove(at: existing)
            } else {
                // Deleted by slot (`ip route del default` names no gateway): only unambiguous matches.
                let candidates = self.defaultRoutes.indices.filter { self.defaultRoutes[$0].sharesSlot(with: route) }
                if candidates.count == 1 {
                    self.defaultRoutes.remove(at: candidates[0])
                }
            }
        case .done, .error, .overrun, .ignored:
            break
        }
    }

    /// Mirrors the kernel's `fib_sync_down_dev`: an IPv4 route through `index` goes when none of its output
    /// links still has IPv4 enabled (present, administratively up, with an IPv4 address).
    private mutating func flushIPv4Routes(through index: Int32) {
        let links = self.links
        let addresses = self.addresses.values
        let enabled = { (link: Int32) -> Bool in
            guard let record = links[link], record.isAdministrativelyUp else { return false }
            return addresses.contains { $0.linkIndex == link && $0.family == Netlink.Family.inet }
        }
        self.defaultRoutes.removeAll { route in
            route.family == Netlink.Family.inet && route.outputLinks.contains(index)
                && !route.outputLinks.contains(where: enabled)
        }
    }

    var snapshot: PathSnapshot {
        let usable = self.defaultRoutes
            .flatMap { route in route.outputLinks.map { (route: route, link: $0) } }
            .filter { self.carries(family: $0.route.family, through: $0.link) }
            .sorted { lhs, rhs in
                (lhs.route.metric, lhs.route.family, lhs.link) < (rhs.route.metric, rhs.route.family, rhs.link)
            }
        var seen: Set<Int32> = []
        let links = usable.compactMap { candidate -> LinkRecord? in
            guard seen.insert(candidate.link).inserted else { return nil }
            return self.links[candidate.link]
        }
        guard !links.isEmpty else { return PathSnapshot(status: .unsatisfied) }
        let interfaces = links.map(\.interfaceKind)
        return PathSnapshot(
            status: .satisfied,
            isExpensive: interfaces.first == .cellular,
            isConstrained: false,
            interfaces: interfaces,
            interfaceNames: links.map(\.name)
        )
    }

    private func carries(family: UInt8, through index: Int32) -> Bool {
        guard let link = self.links[index], link.canCarryTraffic else { return false }
        return self.addresses.values.contains { $0.linkIndex == index && $0.family == family && $0.isUsableSource }
    }
}
#endif
