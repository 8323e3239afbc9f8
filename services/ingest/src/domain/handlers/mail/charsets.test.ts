import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encode, encodedWord } from '../testing/encode.js';
import { CORPUS_SKIP, fixture, message } from '../testing/build.js';
import { parseEmail } from '../testing/parse.js';

/** Charsets found in real archives, each with text it can carry. */
const SAMPLES: Array<[charset: string, text: string]> = [
  ['iso-2022-jp', '日本語の件名です'],
  ['shift_jis', 'ｶﾀｶﾅと漢字の件名'],
  ['euc-jp', '会議の議事録'],
  ['koi8-r', 'Привет, мир'],
  ['windows-1251', 'Съешь же ещё этих мягких булок'],
  ['windows-1252', 'Café – “quoted” €5'],
  ['gb2312', '中文主题测试'],
  ['gbk', '镕基 中文'],
  ['big5', '繁體中文測試'],
  ['euc-kr', '한국어 제목'],
  ['iso-8859-1', 'Déjà vu, naïve façade'],
  ['iso-8859-2', 'Zażółć gęślą jaźń'],
  ['iso-8859-5', 'Кириллица'],
  ['iso-8859-7', 'Ελληνικά κείμενα'],
  ['iso-8859-15', 'Prix : 5 € œuvre'],
];

const from = 'sender@example.com';

describe('charsets: RFC 2047 encoded words in headers', () => {
  for (const [charset, text] of SAMPLES) {
    for (const encoding of ['B', 'Q'] as const) {
      it(`decodes ${charset} ${encoding}-encoded subject and display name`, async () => {
        const item = await parseEmail(
          message([
            ['From', `${encodedWord(text, charset, encoding)} <${from}>`],
            ['Subject', encodedWord(text, charset, encoding)],
          ]),
        );
        assert.equal(item.meta.subject, text);
        assert.deepEqual(item.meta.from, [{ name: text, address: from }]);
      });
    }
  }

  it('joins encoded words split across folded lines, dropping the whitespace between them', async () => {
    const subject = `${encodedWord('Quarterly ', 'iso-8859-1', 'Q')}\r\n ${encodedWord('résumé', 'iso-8859-1', 'Q')}\r\n\t${encodedWord(' 2024', 'utf-8', 'B')}`;
    const item = await parseEmail(
      message([
        ['From', from],
        ['Subject', subject],
      ]),
    );
    assert.equal(item.meta.subject, 'Quarterly résumé 2024');
  });

  it('decodes a UTF-8 character split across two adjacent encoded words', async () => {
    const bytes = Buffer.from('né€', 'utf8');
    const subject = `=?UTF-8?B?${bytes.subarray(0, 2).toString('base64')}?= =?UTF-8?B?${bytes.subarray(2).toString('base64')}?=`;
    const item = await parseEmail(
      message([
        ['From', from],
        ['Subject', subject],
      ]),
    );
    assert.equal(item.meta.subject, 'né€');
  });

  it('keeps plain text around encoded words, in any letter case', async () => {
    const item = await parseEmail(
      message([
        ['From', from],
        ['Subject', 'Re: =?utf-8?q?caf=c3=a9?= and =?ISO-8859-1?b?Y3LobWU=?= too'],
      ]),
    );
    assert.equal(item.meta.subject, 'Re: café and crème too');
  });

  it('reads RFC 2231 encoded attachment file names', { skip: CORPUS_SKIP }, async () => {
    const item = await parseEmail(fixture('mail/mikel-mail/multi_charset/japanese_attachment_long_name.eml'));
    assert.equal(item.children?.[0]?.title, 'かきくけこかきくけこかきくけこかきくけこかきくけこ.txt');
  });
});

describe('charsets: raw 8-bit and ISO-2022-JP header bytes (no RFC 2047)', () => {
  it('reads raw header bytes in the charset the message declares', async () => {
    for (const [charset, text] of SAMPLES.filter(([c]) => c !== 'iso-2022-jp')) {
      const item = await parseEmail(
        message([
          ['From', `${encode('Имя', 'utf-8').toString('latin1')} <${from}>`],
          ['Subject', encode(text, charset).toString('latin1')],
          ['Content-Type', `text/plain; charset=${charset}`],
        ]),
      );
      assert.equal(item.meta.subject, text, charset);
      // The raw UTF-8 name in the same message stays UTF-8.
      assert.equal(item.meta.from[0]?.name, 'Имя', charset);
    }
  });

  it('reads raw ISO-2022-JP escape sequences in headers', async () => {
    const item = await parseEmail(
      message([
        ['From', from],
        ['Subject', encode('会議のお知らせ', 'iso-2022-jp').toString('latin1')],
      ]),
    );
    assert.equal(item.meta.subject, '会議のお知らせ');
    assert.match(item.warnings.join('\n'), /header "subject" read as iso-2022-jp/);
  });

  it('reads undeclared raw 8-bit headers as windows-1252', async () => {
    const item = await parseEmail(
      message([
        ['From', from],
        ['Subject', encode('Grüße – “hi”', 'windows-1252').toString('latin1')],
      ]),
    );
    assert.equal(item.meta.subject, 'Grüße – “hi”');
  });

  it('reads raw GBK headers of a real Chinese message', { skip: CORPUS_SKIP }, async () => {
    const item = await parseEmail(fixture('mail/spamassassin-testdata/nice/cjk/gb2312.1.eml'));
    assert.match(item.meta.subject, /^全新原装进口，送货上门/);
  });
});

describe('charsets: bodies', () => {
  const body = (bytes: Buffer, encoding: string): Buffer => {
    if (encoding === 'base64') return Buffer.from(bytes.toString('base64').replace(/.{76}/g, '$&\r\n'));
    if (encoding === 'quoted-printable')
      return Buffer.from(
        [...bytes]
          .map((b) => (b >= 0x80 || b === 0x3d ? `=${b.toString(16).toUpperCase()}` : String.fromCharCode(b)))
          .join(''),
        'latin1',
      );
    return bytes;
  };

  for (const [charset, text] of SAMPLES) {
    for (const encoding of charset === 'iso-2022-jp' ? ['7bit', 'base64'] : ['8bit', 'base64', 'quoted-printable']) {
      it(`decodes a ${charset} body sent as ${encoding}`, async () => {
        const item = await parseEmail(
          message(
            [
              ['From', from],
              ['Content-Type', `text/plain; charset="${charset}"`],
              ['Content-Transfer-Encoding', encoding],
            ],
            body(encode(`${text}\r\n`, charset), encoding),
          ),
        );
        assert.equal(item.text.trim(), text);
        assert.deepEqual(item.warnings, []);
      });
    }
  }

  it('reads a body with no charset, or a false "utf-8" / "us-ascii", as windows-1252 when it is not UTF-8', async () => {
    for (const declared of ['text/plain', 'text/plain; charset=utf-8', 'text/plain; charset=us-ascii']) {
      const item = await parseEmail(
        message(
          [
            ['From', from],
            ['Content-Type', declared],
            ['Content-Transfer-Encoding', '8bit'],
          ],
          encode('Cañón “x”\r\n', 'windows-1252'),
        ),
      );
      assert.equal(item.text.trim(), 'Cañón “x”', declared);
      assert.match(item.warnings.join('\n'), /was read as windows-1252/, declared);
    }
  });

  it('reads 8-bit text with no Content-Type at all (a list server of 2002), or a MIME part without one, as windows-1252', async () => {
    const bare = await parseEmail(
      message(
        [
          ['From', from],
          ['Subject', 'Newsletter'],
        ],
        encode('L I N U X ·¸¸·´¯`·¸¸·\r\nCañón\r\n', 'windows-1252'),
      ),
    );
    assert.equal(bare.text.trim(), 'L I N U X ·¸¸·´¯`·¸¸·\nCañón');
    assert.match(bare.warnings.join('\n'), /text\/plain part declared no charset and was read as windows-1252/);
    const part = await parseEmail(
      message(
        [
          ['From', from],
          ['MIME-Version', '1.0'],
          ['Content-Type', 'multipart/mixed; boundary="b"'],
        ],
        Buffer.concat([Buffer.from('--b\r\n\r\n'), encode('Señor\r\n', 'windows-1252'), Buffer.from('--b--\r\n')]),
      ),
    );
    assert.equal(part.text.trim(), 'Señor');
  });

  it('reads unlabelled or mislabelled 8-bit text in the charset it is in: Shift_JIS, GB2312, windows-1251, KOI8-R', async () => {
    const cases: Array<[string | null, string, string]> = [
      [null, 'shift_jis', 'こんにちは、明日の会議は十時からです。資料を添付します。'],
      ['text/plain; charset=us-ascii', 'gb2312', '你好，明天的会议十点开始。请带上报告。'],
      ['text/plain; charset=utf-8', 'windows-1251', 'Привет, как дела? Встреча завтра в десять, не опаздывай.'],
      ['text/plain', 'koi8-r', 'Привет, как дела? Встреча завтра в десять, не опаздывай.'],
    ];
    for (const [declared, charset, text] of cases) {
      const item = await parseEmail(
        message(
          [['From', from], ...(declared ? [['Content-Type', declared] as [string, string]] : [])],
          encode(`${text}\r\n`, charset),
        ),
      );
      assert.equal(item.text.trim(), text, charset);
    }
    // A raw 8-bit Subject in Shift_JIS, no charset declared anywhere: its body tells.
    const subject = await parseEmail(
      message(
        [
          ['From', from],
          ['Subject', encode('会議の資料について', 'shift_jis').toString('latin1')],
        ],
        encode(`${cases[0]![2]}\r\n`, 'shift_jis'),
      ),
    );
    assert.equal(subject.title, '会議の資料について');
  });

  it('reads a body whose charset no decoder knows (Mutt\'s "unknown-8bit") by its bytes: UTF-8 when it is, else windows-1252', async () => {
    const read = async (charset: string, body: Buffer) =>
      (
        await parseEmail(
          message(
            [
              ['From', from],
              ['Content-Type', `text/plain; charset=${charset}`],
              ['Content-Transfer-Encoding', '8bit'],
            ],
            body,
          ),
        )
      ).text.trim();
    assert.equal(await read('unknown-8bit', encode('Cañón “x”\r\n', 'windows-1252')), 'Cañón “x”');
    assert.equal(await read('x-unknown', Buffer.from('Zoë’s café\r\n')), 'Zoë’s café');
  });

  it('takes the charset of an HTML part without one from its <meta charset>', async () => {
    const html = Buffer.concat([
      Buffer.from('<html><head><meta charset="windows-1251"></head><body><p>'),
      encode('Привет', 'windows-1251'),
      Buffer.from('</p></body></html>'),
    ]);
    const item = await parseEmail(
      message(
        [
          ['From', from],
          ['Content-Type', 'text/html'],
          ['Content-Transfer-Encoding', '8bit'],
        ],
        html,
      ),
    );
    assert.equal(item.text, 'Привет');
  });

  it('decodes real messages in ISO-2022-JP, Shift_JIS and ks_c_5601-1987', { skip: CORPUS_SKIP }, async () => {
    assert.equal(
      (await parseEmail(fixture('mail/mikel-mail/multi_charset/japanese_iso_2022.eml'))).text.trim(),
      'すみません。',
    );
    assert.match(
      (await parseEmail(fixture('mail/mikel-mail/multi_charset/japanese_shift_jis.eml'))).text,
      /^あいうえお\n\nこのメールはテスト用のメールです。/,
    );
    assert.equal((await parseEmail(fixture('mail/mikel-mail/multi_charset/ks_c_5601-1987.eml'))).text.trim(), '스티해');
    const sjisAttachment = (await parseEmail(fixture('mail/spamassassin-testdata/nice/cjk/iso-2022-jp.1.eml')))
      .children?.[0];
    assert.match(sjisAttachment?.text ?? '', /文字コード\(charset\)\s+: Shift_JIS/);
  });
});
