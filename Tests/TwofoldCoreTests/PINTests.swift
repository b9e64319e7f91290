import Testing
import TwofoldCore

@Suite struct PINTests {
    func pin(_ digits: [Int], length: Int? = nil) -> PIN {
        let pin = PIN(requiredLength: length ?? digits.count)
        for digit in digits { pin.pushDigit(digit) }
        return pin
    }

    @Test func digitsAreAddedAndRemoved() {
        let pin = PIN(requiredLength: 4)
        #expect(!pin.isComplete)
        #expect(pin.pushDigit(1))
        #expect(pin.pushDigit(9))
        pin.popDigit()
        #expect(pin.count == 1)
        #expect(pin.pushDigit(3) && pin.pushDigit(7) && pin.pushDigit(5))
        #expect(pin.isComplete)
        #expect(!pin.pushDigit(2), "a complete PIN takes no more digits")
        #expect(!PIN(requiredLength: 4).pushDigit(10))
        #expect(!PIN(requiredLength: 4).pushDigit(-1))
        pin.withDigits { #expect(Array($0) == [1, 3, 7, 5]) }
    }

    @Test func equalityComparesDigitsAndLength() {
        #expect(pin([1, 3, 7, 5]) == pin([1, 3, 7, 5]))
        #expect(pin([1, 3, 7, 5]) != pin([1, 3, 7, 6]))
        #expect(pin([1, 3, 7], length: 4) != pin([1, 3, 7, 0]))
    }

    @Test func resetWipesValueAndLength() {
        let entered = pin([8, 2, 4, 6])
        entered.reset()
        #expect(entered.count == 0)
        #expect(!entered.isComplete)
        entered.withDigits { #expect($0.isEmpty) }
        #expect(entered.pushDigit(5))
        entered.withDigits { #expect(Array($0) == [5]) }
    }

    @Test func itNeverPrintsItsDigits() {
        let entered = pin([8, 2, 4, 6])
        #expect(entered.description == "PIN(4 of 4 digits)")
        #expect(!String(reflecting: entered).contains("8"))
        #expect(!"\(entered)".contains("8246"))
        #expect(Mirror(reflecting: entered).children.isEmpty)
    }

    static let common: [[Int]] = [
        [1, 2, 3, 4], [0, 0, 0, 0], [1, 1, 1, 1], [4, 3, 2, 1], [7, 8, 9, 0], [9, 8, 7, 6],
        [1, 2, 1, 2], [6, 9, 6, 9], [1, 9, 8, 4], [2, 0, 2, 5], [1, 9, 0, 0], [2, 5, 8, 0],
        [1, 2, 3, 4, 5, 6], [1, 2, 3, 1, 2, 3], [1, 1, 2, 2, 3, 3], [6, 5, 4, 3, 2, 1], [1, 2, 1, 2, 1, 2],
    ]
    static let uncommon: [[Int]] = [[8, 2, 4, 6], [3, 9, 1, 7], [5, 0, 8, 3], [2, 7, 4, 1, 9, 6], [1, 8, 0, 0]]

    @Test("common PINs are recognised", arguments: common)
    func commonPINs(digits: [Int]) { #expect(pin(digits).isCommon) }

    @Test("other PINs are not", arguments: uncommon)
    func uncommonPINs(digits: [Int]) { #expect(!pin(digits).isCommon) }
}
