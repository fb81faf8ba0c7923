// The C library's sin, cos, log and exp: the only platform code this target uses.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

enum Math {
    static func sin(_ x: Double) -> Double { libm_sin(x) }
    static func cos(_ x: Double) -> Double { libm_cos(x) }
    static func log(_ x: Double) -> Double { libm_log(x) }
    static func log10(_ x: Double) -> Double { libm_log10(x) }
    static func exp(_ x: Double) -> Double { libm_exp(x) }
    static func pow(_ x: Double, _ y: Double) -> Double { libm_pow(x, y) }
}

private func libm_sin(_ x: Double) -> Double { sin(x) }
private func libm_cos(_ x: Double) -> Double { cos(x) }
private func libm_log(_ x: Double) -> Double { log(x) }
private func libm_log10(_ x: Double) -> Double { log10(x) }
private func libm_exp(_ x: Double) -> Double { exp(x) }
private func libm_pow(_ x: Double, _ y: Double) -> Double { pow(x, y) }
