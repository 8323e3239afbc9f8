import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import iconv from 'iconv-lite';
import { message } from './testing/build.js';
import { parseDoc, parseEmail } from './testing/parse.js';
import { decodeUtf7 } from './mail/wide-charsets.js';

/**
 * Charsets mailparser and the HTML reader got wrong, generated after what real mail and pages
 * carry: UTF-7 from Outlook and old IMAP servers (RFC 2152's own examples below; Thunderbird bug
 * 414852 and Python's email test suite carry such parts), whole messages saved as UTF-16 by
 * Outlook's "Save as Unicode" (MimeKit issue 1188), and pages converted to UTF-8 that kept a
 * gb2312 or latin-1 <meta charset> (Mozilla's charset-detector tests exist for these).
 */
describe('charsets', () => {
  it('UTF-7 as RFC 2152 writes it', () => {
    assert.equal(decodeUtf7('Hi Mom -+Jjo--!'), 'Hi Mom -\u263a-!');
    assert.equal(decodeUtf7('+ZeVnLIqe-'), '\u65e5\u672c\u8a9e');
    assert.equal(decodeUtf7('A+ImIDkQ.'), 'A\u2262\u0391.');
    assert.equal(decodeUtf7('1 +- 1 = 2'), '1 + 1 = 2');
  });

  it('a UTF-7 text part and a UTF-7 encoded word are decoded (they came out as Fr+APY-sche)', async () => {
    const item = await parseEmail(
      message(
        [
          ['From', 'a@x.org'],
          ['Subject', '=?UTF-7?Q?Fr+APY-sche?='],
          ['Message-ID', '<u7@x>'],
          ['Content-Type', 'text/plain; charset=UTF-7'],
        ],
        'Fr+APY-sche und Gr+APw-+AN8-e\r\n',
      ),
    );
    assert.equal(item.title, 'Frösche');
    assert.equal(item.text.trim(), 'Frösche und Grüße');
  });

  for (const order of ['utf-16le', 'utf-16be'] as const) {
    for (const bom of [true, false]) {
      it(`a whole message in ${order}${bom ? ' with a byte-order mark' : ' without one'} is read (it was refused as binary)`, async () => {
        const text = `${bom ? '\ufeff' : ''}From: Zoë <zoe@x.org>\r\nSubject: Grüße\r\nMessage-ID: <wide@x>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHallöchen\r\n`;
        const bytes = Buffer.from(text, 'utf16le');
        if (order === 'utf-16be') bytes.swap16();
        const item = await parseEmail(bytes);
        assert.equal(item.title, 'Grüße');
        assert.equal(item.text.trim(), 'Hallöchen');
        assert.equal(item.meta.from[0]!.name, 'Zoë');
        assert.match(item.warnings.join('\n'), new RegExp(`whole message was ${order}`));
      });
    }
  }

  it('an HTML page whose <meta> says gb2312 while its bytes are UTF-8 is read as UTF-8', async () => {
    const page =
      '<html><head><meta charset="gb2312"><title>山田さんの日記</title></head><body><p>今日は晴れ。Straße und Café.</p></body></html>';
    const item = await parseDoc('text/html', Buffer.from(page, 'utf8'));
    assert.equal(item.title, '山田さんの日記');
    assert.match(item.text, /今日は晴れ。Straße und Café\./);
    assert.match(item.warnings.join('\n'), /says gb2312 but the bytes are UTF-8/);
    // A page really in gb2312 is still read as gb2312.
    const real = Buffer.concat([
      Buffer.from('<html><head><meta charset="gb2312"><title>'),
      Buffer.from([0xc4, 0xe3, 0xba, 0xc3]),
      Buffer.from('</title></head><body>x</body></html>'),
    ]);
    assert.equal((await parseDoc('text/html', real)).title, '你好');
  });

  it('an HTML title keeps no <script> as literal text', async () => {
    const item = await parseDoc(
      'text/html',
      '<html><head><title>Offers<script>alert("x")</script> today</title></head><body><p>b</p></body></html>',
    );
    assert.equal(item.title, 'Offers today');
  });

  // Excel in Japan saves CSV in code page 932, with no charset anywhere; a short file gives the
  // detectors too little to go on, and an IBM extension kanji (髙) throws jschardet off (markitdown
  // keeps such a file among its tests). Western text with curly quotes must stay Western.
  it('a CSV in Windows Shift_JIS is read as Japanese, short or with an extension kanji; curly quotes stay Western', async () => {
    const csvs = [
      '名前,年齢,住所\n佐藤太郎,30,東京\n三木英子,25,大阪\n髙橋淳,35,名古屋\n',
      '名前,年齢,住所\n佐藤太郎,30,東京都\n鈴木花子,25,大阪府\n',
      '品名,数量\nりんご,3\nみかん,12\n',
    ];
    for (const csv of csvs) {
      const item = await parseDoc('text/csv', iconv.encode(csv, 'cp932'));
      assert.match(item.text, new RegExp(csv.split('\n')[1]!.split(',')[0]!), csv);
    }
    const western = 'I don’t think it’s right — we’re late, they’re gone, you’re here, I’m off.\n';
    assert.equal((await parseDoc('text/plain', iconv.encode(western, 'windows-1252'))).text.trim(), western.trim());
    const french = 'Crème brûlée, déjà vu, naïve façade; ÉTÉ À PARIS.\n';
    assert.equal((await parseDoc('text/plain', iconv.encode(french, 'windows-1252'))).text.trim(), french.trim());
  });

  // Unstructured keeps a UTF-32 text among its example documents; Python writes one with
  // .encode('utf-32'). TextDecoder has no UTF-32, and its mark begins like UTF-16's: it was refused
  // as binary (NUL bytes).
  it('UTF-32 text, little- or big-endian, with a byte-order mark or without, is read', async () => {
    const text = 'Hamburgers are delicious; Grüße, ☃ and 𝄞.\nSecond line.\n';
    const units = (littleEndian: boolean, bom: boolean) => {
      const points = [...(bom ? [0xfeff] : []), ...[...text].map((c) => c.codePointAt(0)!)];
      const bytes = Buffer.alloc(points.length * 4);
      points.forEach((p, i) => (littleEndian ? bytes.writeUInt32LE(p, i * 4) : bytes.writeUInt32BE(p, i * 4)));
      return bytes;
    };
    for (const [little, bom] of [
      [true, true],
      [false, true],
      [true, false],
      [false, false],
    ] as const) {
      const item = await parseDoc('text/plain', units(little, bom));
      assert.equal(item.text.trim(), text.trim(), `${little ? 'LE' : 'BE'}${bom ? ' with a mark' : ''}`);
    }
  });
});
