/// Passwords that appear at the top of every published breach-frequency list (the "most common
/// passwords" lists compiled from the RockYou, LinkedIn and Adobe leaks, and NCSC's top-100k head),
/// compared lower-case. Only those of 8 or more characters matter: shorter ones fail the length rule.
enum CommonPasswords {
    static let all: Set<String> = [
        "12345678", "123456789", "1234567890", "12345678910", "123123123", "123456789a", "1234567891",
        "11111111", "111111111", "00000000", "000000000", "87654321", "987654321", "0987654321",
        "88888888", "99999999", "55555555", "66666666", "77777777", "12341234", "11223344", "147258369",
        "159753456", "123qweasd", "1q2w3e4r", "1q2w3e4r5t", "1q2w3e4r5t6y", "1qaz2wsx", "1qaz2wsx3edc",
        "zaq12wsx", "qwertyui", "qwertyuiop", "qwerty123", "qwerty1234", "qwerty12345", "asdfghjkl",
        "asdfasdf", "zxcvbnm1", "zxcvbnm123", "password", "password1", "password12", "password123",
        "password1234", "passw0rd", "p@ssw0rd", "p@ssword", "pa$$word", "passwort", "motdepasse",
        "contraseña", "senha123", "iloveyou", "iloveyou1", "iloveyou2", "princess", "princess1",
        "sunshine", "sunshine1", "football", "football1", "baseball", "basketball", "superman",
        "batman123", "starwars", "trustno1", "whatever", "welcome1", "welcome123", "letmein1",
        "letmein123", "master123", "mustang1", "michelle", "jennifer", "jordan23", "charlie1",
        "computer", "corvette", "butterfly", "chocolate", "cookie123", "dragon123", "monkey123",
        "shadow123", "abc12345", "abcd1234", "abcdefgh", "abcdefg1", "a1234567", "aa123456",
        "admin123", "administrator", "changeme", "changeme1", "default1", "secret123", "test1234",
        "testtest", "internet", "samsung1", "liverpool", "arsenal1", "chelsea1", "newyork1",
        "michael1", "jessica1", "ashley123", "hello123", "helloworld", "access14", "qazwsxedc",
        "q1w2e3r4", "q1w2e3r4t5", "azerty123", "azertyuiop", "11111111a", "aaaaaaaa", "1234qwer",
        "qwer1234", "asdf1234", "zxcv1234", "!qaz2wsx", "1q2w3e4r!", "password!", "password1!",
        "twofold1", "twofold123",
    ]
}
