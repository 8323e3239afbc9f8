import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { signatureIn } from './signature.js';

/** The signature's fields as `field: value`, after checking each span is the field's text. */
function fields(text: string, sender = 'someone@example.org'): string[] {
  const block = signatureIn(text, sender);
  if (!block) return [];
  assert.equal(block.sender, sender);
  for (const f of block.fields) assert.equal(text.slice(f.start, f.end), f.text, `span of ${f.field}`);
  assert.ok(
    block.fields.every((f) => f.start >= block.start && f.end <= block.end),
    'fields lie inside the block',
  );
  return block.fields.map((f) => `${f.field}: ${f.value}`);
}

describe('signature blocks', () => {
  test('after the `-- ` separator: name, title and company on separate lines, phones with labels', () => {
    const text = [
      'Thanks for the notes, I will fold them in.',
      '',
      '-- ',
      'María José García',
      'Head of Data Engineering',
      'Globex Corporation',
      'T: +34 912 345 678 | M: +34 612 345 678',
      'https://globex.example',
    ].join('\n');
    assert.deepEqual(fields(text), [
      'name: María José García',
      'title: Head of Data Engineering',
      'company: Globex Corporation',
      'phone: +34912345678',
      'phone: +34612345678',
    ]);
  });

  test('without a separator: after a closing line, "Title, Company" on one line; quoted mail below is not ours', () => {
    const text = [
      'Sounds good, see you Tuesday.',
      '',
      'Best regards,',
      'Jane Doe',
      'Senior Research Engineer, Acme Robotics Inc.',
      'Mobile: +1 415-555-0132',
      '',
      'On Mon, Mar 3, 2025 at 10:00 AM Bob Stone <bob@initech.example> wrote:',
      '> Cheers,',
      '> Bob Stone',
      '> CTO, Initech LLC',
    ].join('\n');
    assert.deepEqual(fields(text), [
      'name: Jane Doe',
      'title: Senior Research Engineer',
      'company: Acme Robotics Inc.',
      'phone: +14155550132',
    ]);
  });

  test('other languages\' closings, "Title at Company", a name with particles', () => {
    const text = [
      'Anbei die Unterlagen.',
      '',
      'Mit freundlichen Grüßen',
      'Jan van der Berg',
      'Product Manager at Stark GmbH',
      '+49 30 901820',
    ].join('\n');
    assert.deepEqual(fields(text), [
      'name: Jan van der Berg',
      'title: Product Manager',
      'company: Stark GmbH',
      'phone: +4930901820',
    ]);
  });

  test('no signature: a closing word inside a sentence, or a message without one', () => {
    assert.deepEqual(fields('Thanks, that works. Best regards to your team.\nTalk soon'), []);
    assert.deepEqual(fields('Meeting moved to 3pm.'), []);
    // A closing followed only by a first name gives the name and nothing more.
    assert.deepEqual(fields('See attached.\n\nCheers,\nTom'), ['name: Tom']);
  });

  test('a title that is all title ("Director, Sales and Marketing") stays whole; a university is a company', () => {
    const text = [
      'Regards,',
      'Priya Natarajan',
      'Director, Sales and Marketing',
      'Stanford University',
      '(650) 723-2300',
    ].join('\n');
    assert.deepEqual(fields(text), [
      'name: Priya Natarajan',
      'title: Director, Sales and Marketing',
      'company: Stanford University',
      'phone: +16507232300',
    ]);
  });
});
