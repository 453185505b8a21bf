/**
 * A small list of the most-used passwords (lower case), refused for new passwords. Short on
 * purpose: it catches the passwords every guessing script tries first, without shipping a
 * megabyte list. Each entry is at least 8 characters, the shorter ones fail the length rule anyway.
 */
export const COMMON_PASSWORDS: ReadonlySet<string> = new Set([
  '12345678', '123456789', '1234567890', '11111111', '00000000', '87654321', '12341234', '11223344',
  'password', 'password1', 'password12', 'password123', 'password!', 'passw0rd', 'p@ssw0rd', 'p@ssword',
  'qwertyui', 'qwertyuiop', 'qwerty123', 'qwerty12', '1qaz2wsx', '1q2w3e4r', '1q2w3e4r5t', 'zaq12wsx',
  'asdfghjk', 'asdfghjkl', 'zxcvbnm1', 'iloveyou', 'iloveyou1', 'sunshine', 'princess', 'football',
  'baseball', 'starwars', 'whatever', 'trustno1', 'superman', 'computer', 'michelle', 'jennifer',
  'letmein1', 'letmein!', 'welcome1', 'welcome123', 'admin123', 'administrator', 'changeme',
  'changeme1', 'default1', 'abc12345', 'abcd1234', 'abcdefgh', 'aa123456', 'monkey123', 'dragon123',
  'master123', 'shadow12', 'freedom1', 'secret123', 'mustang1', 'access14', 'charlie1', 'qwerty1234',
  'liverpool', 'chelsea1', 'arsenal1', 'pokemon1', 'samsung1', 'internet', 'test1234', 'testtest',
  'lovelove', 'loveyou1', 'hello123', 'helloworld', 'q1w2e3r4', 'q1w2e3r4t5', 'a1b2c3d4', 'cybercom',
  'cybercommons', 'mongodb1', 'rabbitmq',
]);
