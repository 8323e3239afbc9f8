// A text field for a thing's key that completes names through memex.mention.complete.
import { useEffect, useState } from 'preact/hooks';
import { call, type Result } from '../api';

type Suggestion = Result<'memex.mention.complete'>['items'][number];

export function ThingInput({
  id,
  label,
  value,
  onChange,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (key: string) => void;
}) {
  const [options, setOptions] = useState<Suggestion[]>([]);
  useEffect(() => {
    const prefix = value.replace(/^[a-z]+:/, '');
    if (prefix.length < 2) return setOptions([]);
    let live = true;
    call('memex.mention.complete', { prefix, limit: 8 }).then(
      (answer) => live && setOptions(answer.items),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [value]);
  return (
    <label>
      {label}
      <input
        id={id}
        list={`${id}-options`}
        value={value}
        placeholder="a name or key (person:…)"
        onInput={(e) => onChange(e.currentTarget.value)}
      />
      <datalist id={`${id}-options`}>
        {options.map((o) => (
          <option key={o.key} value={o.key}>
            {o.name} ({o.kind})
          </option>
        ))}
      </datalist>
    </label>
  );
}
