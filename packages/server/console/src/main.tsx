import { render } from 'preact';

function App() {
  return <main><h1>mailverify</h1></main>;
}

render(<App />, document.getElementById('app')!);
