// The signed-in person's profile: display name and picture (an http(s) address), and a password
// change that needs the current password. A password change ends every earlier session, this one
// included: the answer carries the new session, which replaces the one kept here.
import { useState, type FormEvent } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { signIn, useSignedInSession } from '../api/session.ts'
import { MIN_PASSWORD, PasswordRule } from '../invite/PasswordRule.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { peopleKeys, updateMe, useMe } from './queries.ts'

const SENTENCES = {
  VALIDATION_ERROR: 'The picture must be a web address starting with http:// or https://, and the name cannot be blank.',
}

export function ProfilePage() {
  const session = useSignedInSession()
  const me = useMe()
  const human = me.data && me.data.type === 'HUMAN' ? me.data : null
  return (
    <section className="search-page profile-page" aria-labelledby="profile-title">
      <header className="channel-header">
        <h1 id="profile-title">Your profile</h1>
        <p className="muted small">{session.email}</p>
      </header>
      <div className="search-body">
        {me.isPending && <p className="muted">Loading…</p>}
        <ErrorNote error={me.error} />
        {human && <ProfileForms name={human.display_name} avatar={(human as { avatar_url?: string | null }).avatar_url ?? null} />}
      </div>
    </section>
  )
}

function ProfileForms({ name: savedName, avatar: savedAvatar }: { name: string; avatar: string | null }) {
  const session = useSignedInSession()
  const queryClient = useQueryClient()
  const [name, setName] = useState(savedName)
  const [avatar, setAvatar] = useState(savedAvatar ?? '')
  const [current, setCurrent] = useState('')
  const [next, setNext] = useState('')
  const [saved, setSaved] = useState<'profile' | 'password' | null>(null)
  const save = useMutation({
    mutationFn: updateMe,
    onSuccess: (me, change) => {
      // The new session first: every request after this one needs its token.
      const fresh = (me as { session?: { token: string; expires_at: string } }).session
      signIn({ ...session, display_name: me.display_name, ...(fresh ? { token: fresh.token, expires_at: fresh.expires_at } : {}) })
      queryClient.setQueryData(peopleKeys.me, me)
      void queryClient.invalidateQueries({ queryKey: peopleKeys.directory })
      setSaved(change.new_password ? 'password' : 'profile')
      if (change.new_password) {
        setCurrent('')
        setNext('')
      }
    },
    onMutate: () => setSaved(null),
  })
  const saveProfile = (event: FormEvent) => {
    event.preventDefault()
    save.mutate({ display_name: name.trim(), avatar_url: avatar.trim() ? avatar.trim() : null })
  }
  const changePassword = (event: FormEvent) => {
    event.preventDefault()
    save.mutate({ current_password: current, new_password: next })
  }
  const which = save.variables?.new_password ? 'password' : 'profile'
  return (
    <>
      <form className="stack profile-form" onSubmit={saveProfile} aria-labelledby="profile-details">
        <h2 id="profile-details">Name and picture</h2>
        <div className="profile-preview">
          {avatar.trim() && /^https?:\/\//.test(avatar.trim()) ? (
            <img src={avatar.trim()} alt="" className="avatar" referrerPolicy="no-referrer" />
          ) : (
            <span className="avatar avatar-initial" aria-hidden="true">
              {(name.trim()[0] ?? '?').toUpperCase()}
            </span>
          )}
        </div>
        <label>
          Display name
          <input required maxLength={255} value={name} onChange={(e) => setName(e.target.value)} autoComplete="name" />
        </label>
        <label>
          Picture address (optional)
          <input type="url" maxLength={2048} placeholder="https://…" value={avatar} onChange={(e) => setAvatar(e.target.value)} />
        </label>
        {which === 'profile' && <ErrorNote error={save.error} sentences={SENTENCES} />}
        {saved === 'profile' && (
          <p className="notice" role="status">
            Saved. Others see the new name and picture now.
          </p>
        )}
        <button type="submit" className="primary" disabled={save.isPending || !name.trim()}>
          Save
        </button>
      </form>
      <form className="stack profile-form" onSubmit={changePassword} aria-labelledby="profile-password">
        <h2 id="profile-password">Password</h2>
        <label>
          Current password
          <input type="password" required autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.target.value)} />
        </label>
        <label>
          New password
          <input type="password" required autoComplete="new-password" aria-describedby="password-rule" value={next} onChange={(e) => setNext(e.target.value)} />
        </label>
        <PasswordRule password={next} />
        {which === 'password' && <ErrorNote error={save.error} sentences={SENTENCES} />}
        {saved === 'password' && (
          <p className="notice" role="status">
            Password changed. Your other devices must sign in again.
          </p>
        )}
        <button type="submit" className="primary" disabled={save.isPending || !current || next.length < MIN_PASSWORD}>
          Change password
        </button>
      </form>
    </>
  )
}
