// Compiled into the Tether module by scripts/apple-typecheck.sh, never built otherwise: the optional delegate methods
// URLSession calls on Tether's WebSocketTaskDelegateBridge, each checked against Apple's name and type (see
// URLSessionDelegateMethods in scripts/apple-stand-ins/Foundation.swift). A method listed here that the bridge does
// not implement exactly as Apple declares it fails the type-check; a method URLSession would have called and the
// bridge no longer implements must be taken off the list knowingly.
import Foundation

extension WebSocketTaskDelegateBridge:
    URLSessionDelegateMethods.DidReceiveChallenge,
    URLSessionDelegateMethods.TaskDidReceiveChallenge,
    URLSessionDelegateMethods.TaskDidComplete,
    URLSessionDelegateMethods.TaskDidFinishCollecting,
    URLSessionDelegateMethods.TaskWillPerformHTTPRedirection,
    URLSessionDelegateMethods.WebSocketDidOpen,
    URLSessionDelegateMethods.WebSocketDidClose
{}
