import { useQuery } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'

export const useChannels = () => useQuery({ queryKey: ['sidebar', 'channels'], queryFn: () => unwrap(api.GET('/api/v1/channels')) })

export const useDms = () => useQuery({ queryKey: ['sidebar', 'dms'], queryFn: () => unwrap(api.GET('/api/v1/dm')) })

export const useChannel = (id: string) => useQuery({ queryKey: ['channel', id], queryFn: () => unwrap(api.GET('/api/v1/channels/{id}', { params: { path: { id } } })) })
