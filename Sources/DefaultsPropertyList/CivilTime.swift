/// Calendar arithmetic for the UTC timestamps that property lists store.
///
/// Done by hand rather than with `DateFormatter`/`ISO8601DateFormatter`: those
/// cost microseconds per call and are not thread-safe to share, while plist
/// dates are always UTC with a fixed layout.
struct CivilTime: Equatable {
    var year: Int
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int
    var second: Int

    /// Seconds from 1970-01-01 to Foundation's reference date, 2001-01-01.
    static let referenceOffset: Int = 978_307_200

    /// The whole seconds of `interval` a text property list keeps: rounded down as Foundation does,
    /// `NaN` as the reference date.
    static func storedSeconds(_ interval: Double) -> Double {
        interval.isNaN ? 0 : min(max(interval.rounded(.down), -1e14), 1e14)
    }

    /// Splits a date into UTC fields, rounding down to the whole second as Foundation does.
    init(referenceInterval interval: Double) {
        // Clamp absurd dates (from a hostile binary plist) to about ±3 million years: no trap in
        // the Int conversion, and the text stays within what `parseISODate` reads back.
        let unix = Int(Self.storedSeconds(interval)) + CivilTime.referenceOffset
        let days = unix >= 0 ? unix / 86_400 : (unix - 86_399) / 86_400
        let secondsOfDay = unix - days * 86_400
        (year, month, day) = CivilTime.civil(fromDays: days)
        hour = secondsOfDay / 3600
        minute = secondsOfDay / 60 % 60
        second = secondsOfDay % 60
    }

    /// Appends `yyyy-MM-dd<between>HH:mm:ss<zone>`: the XML form with `T` and `Z`, the old-style
    /// (`NSDate` description) form with a space and ` +0000`.
    func append(to out: inout ByteWriter, between separator: Unicode.Scalar, zone: StaticString) {
        out.appendPadded(year, width: 4)
        out.append(UInt8(ascii: "-"))
        out.appendPadded(month, width: 2)
        out.append(UInt8(ascii: "-"))
        out.appendPadded(day, width: 2)
        out.append(UInt8(ascii: separator))
        out.appendPadded(hour, width: 2)
        out.append(UInt8(ascii: ":"))
        out.appendPadded(minute, width: 2)
        out.append(UInt8(ascii: ":"))
        out.appendPadded(second, width: 2)
        out.append(zone)
    }

    init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        (self.year, self.month, self.day, self.hour, self.minute, self.second) = (
            year, month, day, hour, minute, second
        )
    }

    /// Seconds since 2001-01-01 00:00:00 UTC.
    var timeIntervalSinceReferenceDate: Double {
        let days = CivilTime.days(fromCivil: year, month, day)
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second - CivilTime.referenceOffset)
    }

    /// Whether the fields name a real calendar day and time (a leap second is let through).
    var isValid: Bool {
        guard (1...12).contains(month), day >= 1, (0...23).contains(hour), (0...59).contains(minute),
            (0...60).contains(second)
        else { return false }
        // Beyond this range the day arithmetic could overflow; Foundation's own dates do not get close.
        guard abs(year) <= 10_000_000 else { return false }
        return day <= CivilTime.daysInMonth(year, month)
    }

    static func daysInMonth(_ year: Int, _ month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian, day 0 = 1970-01-01).
    static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
