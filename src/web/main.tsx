import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { App } from './App.tsx'
import { ApiError } from './api/errors.ts'
import './ui/styles.css'

const queryClient = new QueryClient({
  defaultOptions: {
    // A change tried while offline fails at once and says so, instead of waiting unseen for the
    // browser to come back online (the composer keeps unsent text in its own outbox).
    mutations: { networkMode: 'always' },
    queries: {
      staleTime: 30_000,
      refetchOnWindowFocus: false,
      // A refusal (4xx) will not change by asking again; an outage or a lost connection may.
      retry: (count, error) => count < 2 && !(error instanceof ApiError && error.status >= 400 && error.status < 500),
    },
  },
})

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
)
