// A seeded generator for the fuzz targets' masking keys (compiled into each; see scripts/fuzz.sh).

struct FuzzRandom: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        self.state = self.state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return self.state
    }
}
