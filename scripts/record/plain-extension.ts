// Loaded in place of SoL-Pi when a scenario is recorded without it, so the session is
// plain Pi: this extension registers nothing and changes nothing.
export default function plainPi(): void {}
